import { beforeEach, describe, expect, it } from '@jest/globals';
import { testConfig } from '../../test/fakes/config.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';
import { FakeMadRepository } from '../../test/fakes/usage.js';
import type { MadRepository } from './mad.repository.js';
import { MAD_GRACE_MS, MadService, type CountingTenant } from './mad.service.js';
import type { UsageAlertsService } from './usage-alerts.service.js';

const DAY = 86_400_000;
const now = new Date('2026-03-15T12:00:00Z');
const free: CountingTenant = {
  organizationId: trustOrganizationId('org-1'),
  serviceTier: 'free',
  currentPeriodEnd: null,
};

describe('MadService', () => {
  let counters: FakeMadRepository;
  let alerts: [string, string, number, number | null][];
  let mad: MadService;

  beforeEach(() => {
    counters = new FakeMadRepository();
    alerts = [];
    const notify = (...args: [string, string, number, number | null]) => void alerts.push(args);
    mad = new MadService(testConfig, { notify } as unknown as UsageAlertsService, counters as unknown as MadRepository);
  });

  it('counts a device once per period and tells the alerts the new count', async () => {
    expect(await mad.count(free, 'd1', true, now)).toEqual({
      counted: true,
      current: 1,
      limit: 1000,
      inGrace: false,
    });
    expect(await mad.count(free, 'd1', false, now)).toMatchObject({ counted: false });
    expect(counters.period('org-1', '2026-03-01')?.activeDevices).toBe(1);
    expect(alerts).toEqual([['org-1', '2026-03-01', 1, 1000]]);
  });

  it('writes nothing for a device the caller already found counted', async () => {
    expect(await mad.count(free, 'd1', false, now, true)).toMatchObject({ counted: false });
    expect(counters.periods.size).toBe(0);
  });

  it('admits new devices over the limit during the 7-day grace period, remembering when it began', async () => {
    counters.seed('org-1', '2026-03-01', 1000);
    expect(await mad.count(free, 'd-new', true, now)).toEqual({
      counted: true,
      current: 1001,
      limit: 1000,
      inGrace: true,
    });
    expect(counters.period('org-1', '2026-03-01')?.overLimitSince).toEqual(now);
  });

  it('refuses a new device once the grace period has ended (402 quota_exceeded)', async () => {
    counters.seed('org-1', '2026-03-01', 1000, new Date(now.getTime() - MAD_GRACE_MS));
    await expect(mad.count(free, 'd-new', true, now)).rejects.toMatchObject({
      status: 402,
      code: 'quota_exceeded',
    });
  });

  it('keeps devices already known working over the limit, grace or not', async () => {
    counters.seed('org-1', '2026-03-01', 1000, new Date(now.getTime() - 30 * DAY));
    expect(await mad.count(free, 'known-device', false, now)).toMatchObject({
      counted: true,
      inGrace: false,
    });
  });

  it('never limits Enterprise', async () => {
    const enterprise = { ...free, serviceTier: 'enterprise' };
    counters.seed('org-1', '2026-03-01', 5_000_000);
    expect(await mad.count(enterprise, 'd-new', true, now)).toMatchObject({
      counted: true,
      limit: null,
      inGrace: false,
    });
  });

  it('counts a paid cycle that starts mid-month in both the billing period and the calendar month', async () => {
    const paid: CountingTenant = {
      organizationId: trustOrganizationId('org-1'),
      serviceTier: 'professional',
      currentPeriodEnd: new Date('2026-03-20T00:00:00Z'),
      billingAnchorDay: 20,
    };
    expect(mad.periodStarts(paid, now)).toEqual(['2026-02-20', '2026-03-01']);
    await mad.count(paid, 'd1', true, now);
    expect(counters.period('org-1', '2026-02-20')?.activeDevices).toBe(1);
    expect(counters.period('org-1', '2026-03-01')?.activeDevices).toBe(1);
  });
});
