import { expect } from '@jest/globals';
import type { TestApp } from '../harness/test-app.js';

/** The organization's monthly-active-device counter of its latest period, as stored. */
export async function madCounter(
  t: TestApp,
  organizationId: string,
): Promise<{ active_devices: number; over_limit_since: Date | null }> {
  const [counter] = await t.sql<{ active_devices: number; over_limit_since: Date | null }>(
    `SELECT active_devices, over_limit_since FROM mad_counters WHERE organization_id = $1
      ORDER BY period_start DESC LIMIT 1`,
    [organizationId],
  );
  return counter;
}

/** Moves the start of the organization's overages eight days back: their seven days of grace are over. */
export async function endMadGrace(t: TestApp, organizationId: string): Promise<void> {
  await t.sql(`UPDATE mad_counters SET over_limit_since = now() - interval '8 days' WHERE organization_id = $1`, [
    organizationId,
  ]);
}

/** The answer to a new device of a Free organization past its 1,000 devices and its grace (402). */
export function freePlanQuotaRefusal(requestId: string | undefined) {
  return {
    error: 'quota_exceeded',
    code: 'quota_exceeded',
    message: expect.any(String),
    hint: 'Retrying does not help',
    upgradeUrl: 'http://127.0.0.1:3000/billing',
    limit: 1000,
    current: 1001,
    requestId,
  };
}
