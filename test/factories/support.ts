import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type { TestApp } from '../harness/test-app.js';
import { sdk } from '../support/sdk-client.js';

/** A support ticket as the SDK answers it. */
export interface SdkTicket {
  id: string;
  subject: string;
  status: string;
  priority: string;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
  messages: { id: string; ticketId: string; authorType: string; body: string; createdAt: string }[];
}

/** A ticket opened through the SDK by a fresh end user; its body is the first message. */
export async function openTicket(
  t: TestApp,
  app: { bundleId: string },
  body: Record<string, unknown> = {},
): Promise<SdkTicket> {
  const response = await sdk(t, app)
    .post('/api/v1/support/tickets')
    .send({
      subject: 'Cannot sign in',
      body: 'The app says my password is wrong.',
      submitterId: `user-${randomUUID()}`,
      ...body,
    });
  expect(response.status).toBe(201);
  return response.body as SdkTicket;
}
