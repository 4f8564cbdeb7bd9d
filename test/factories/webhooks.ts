import type { HttpClient } from '../harness/test-app.js';
import type { WebhookReceiver, WebhookReceivers } from '../support/webhook-receiver.js';

export interface CreatedEndpoint {
  id: string;
  secret: string;
}

/** A webhook endpoint of the agent's organization delivering `events` to `url`, created through the API. */
export async function createWebhookEndpoint(
  agent: HttpClient,
  url: string,
  events: readonly string[],
): Promise<CreatedEndpoint> {
  const response = await agent.post('/api/v1/org/webhooks').send({ url, events }).expect(201);
  return response.body as CreatedEndpoint;
}

/** A receiver started from `receivers` with an endpoint of the agent's organization subscribed to `events`. */
export async function subscribedReceiver(
  receivers: WebhookReceivers,
  agent: HttpClient,
  events: readonly string[],
): Promise<WebhookReceiver> {
  const receiver = await receivers.start();
  await createWebhookEndpoint(agent, receiver.url, events);
  return receiver;
}
