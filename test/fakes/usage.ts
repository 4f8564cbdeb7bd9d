import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { MadCounter, MadRepository } from '../../src/usage/mad.repository.js';

type Public<T> = { [K in keyof T]: T[K] };

interface Period {
  devices: Set<string>;
  activeDevices: number;
  overLimitSince: Date | null;
  alertsSent: Set<number>;
}

/** mad_devices and mad_counters in memory, by organization and period start. */
export class FakeMadRepository implements Public<MadRepository> {
  readonly periods = new Map<string, Period>();
  /** The calendar month `calendarMonthActiveDevices` reads (a period start). */
  calendarMonth = '2026-01-01';

  /** A period whose counter already stands at `activeDevices` (devices counted before the test). */
  seed(organizationId: string, periodStart: string, activeDevices: number, overLimitSince: Date | null = null): void {
    this.periods.set(`${organizationId}/${periodStart}`, {
      devices: new Set(),
      activeDevices,
      overLimitSince,
      alertsSent: new Set(),
    });
  }

  period(organizationId: string, periodStart: string): Period | undefined {
    return this.periods.get(`${organizationId}/${periodStart}`);
  }

  count(organizationId: string, periodStart: string, deviceId: string): Promise<MadCounter | null> {
    if (!this.period(organizationId, periodStart)) this.seed(organizationId, periodStart, 0);
    const period = this.period(organizationId, periodStart)!;
    if (period.devices.has(deviceId)) return Promise.resolve(null);
    period.devices.add(deviceId);
    period.activeDevices++;
    return Promise.resolve({ activeDevices: period.activeDevices, overLimitSince: period.overLimitSince });
  }

  markOverLimit(organizationId: string, periodStart: string, since: Date): Promise<void> {
    const period = this.period(organizationId, periodStart);
    if (period) period.overLimitSince = since;
    return Promise.resolve();
  }

  activeDevices(organizationId: OrganizationId, periodStart: string): Promise<number> {
    return Promise.resolve(this.period(organizationId, periodStart)?.activeDevices ?? 0);
  }

  calendarMonthActiveDevices(organizationId: string): Promise<number> {
    return Promise.resolve(this.period(organizationId, this.calendarMonth)?.activeDevices ?? 0);
  }

  claimAlert(organizationId: string, periodStart: string, level: number): Promise<boolean> {
    const period = this.period(organizationId, periodStart);
    if (!period || period.alertsSent.has(level)) return Promise.resolve(false);
    period.alertsSent.add(level);
    return Promise.resolve(true);
  }
}
