// Webhook delivery throughput: 10,000 events queued in the outbox of a running server, delivered by
// its sweep to a receiver on loopback. Reports deliveries per second and the delay from event to
// delivery (p50, p99).
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

export async function measureWebhookDelivery(db, app, count = 10_000, timeoutMs = 120_000) {
  const delays = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const { timestamp } = JSON.parse(body);
      delays.push(Date.now() - new Date(timestamp).getTime());
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address();
  await db.query(`UPDATE organizations SET service_tier = 'enterprise' WHERE id = $1`, [app.organizationId]);
  const { rows } = await db.query(
    `INSERT INTO webhook_endpoints (organization_id, url, secret, events) VALUES ($1, $2, $3, '{device.new}') RETURNING id`,
    [app.organizationId, `http://127.0.0.1:${port}/hooks`, `whsec_${randomUUID()}`],
  );
  const started = Date.now();
  await db.query(
    `WITH events AS (
       INSERT INTO webhook_events (organization_id, event_type, data)
       SELECT $1, 'device.new', jsonb_build_object('key_id', 'bench-' || n, 'device_id', '', 'risk_score', 0)
         FROM generate_series(1, $3) AS n RETURNING id
     )
     INSERT INTO webhook_deliveries (organization_id, endpoint_id, event_id) SELECT $1, $2, id FROM events`,
    [app.organizationId, rows[0].id, count],
  );
  while (delays.length < count && Date.now() - started < timeoutMs)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const elapsed = (Date.now() - started) / 1000;
  receiver.close();
  delays.sort((a, b) => a - b);
  const percentile = (p) => delays[Math.min(delays.length - 1, Math.floor((p / 100) * delays.length))] ?? null;
  return {
    delivered: delays.length,
    perSecond: Math.round(delays.length / elapsed),
    p50Ms: percentile(50),
    p99Ms: percentile(99),
  };
}
