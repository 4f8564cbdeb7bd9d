import type { OrganizationId } from '../common/access/tenant-id.js';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { tierDefinition } from '../common/tiers.js';
import { billingPeriod, calendarMonth, periodKey } from './billing-period.js';
import { MadRepository } from './mad.repository.js';
import { UsageAlertsService } from './usage-alerts.service.js';
import { quotaExceeded } from './usage.exceptions.js';

/** After the first attestation over the limit, new devices are still admitted this long. */
export const MAD_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * What counting needs to know of the attesting organization: the tenant the SDK call resolved to
 * (apps' `Tenant` has these fields). Declared here so that usage does not depend on apps.
 */
export interface CountingTenant {
  readonly organizationId: OrganizationId;
  readonly serviceTier: string;
  readonly currentPeriodEnd: Date | null;
  /** The day of month the paid cycle renews on, when known. */
  readonly billingAnchorDay?: number | null;
}

/**
 * The count of a new device in the one statement that stores it (decision 0078): the usage
 * feature's SQL function `mad_count_new_device`, given these. See `MadService.newDeviceCount`.
 */
export interface NewDeviceCount {
  readonly billing: string;
  /** The calendar month's start when it differs from the billing period's, else null. */
  readonly calendar: string | null;
  /** The plan's limit the billing count must stay within (null: none). */
  readonly limit: number | null;
}

export interface MadOutcome {
  /** The device was counted for the first time this period. */
  counted: boolean;
  current: number;
  limit: number | null;
  /** The organization is over its limit and in its grace period. */
  inGrace: boolean;
}

/**
 * Monthly active devices: a device counts once per billing period. Counting is one upsert on a
 * per-period counter row (O(1), no count query), which also serialises concurrent new devices
 * of one organization, so the limit cannot be overshot by a race.
 */
@Injectable()
export class MadService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly alerts: UsageAlertsService,
    private readonly counters: MadRepository,
  ) {}

  /**
   * The period starts a device counts in at `now`: the billing period's, then the calendar
   * month's when it differs. The billing summary reads the calendar month; the usage endpoints the
   * billing period. For Free and most paid plans they are the same row.
   */
  periodStarts(tenant: CountingTenant, now: Date): string[] {
    const billing = periodKey(
      billingPeriod(now, tenant.serviceTier, tenant.currentPeriodEnd, tenant.billingAnchorDay).start,
    );
    const calendar = periodKey(calendarMonth(now).start);
    return calendar === billing ? [billing] : [billing, calendar];
  }

  /**
   * What the one-statement validate (decision 0078) passes to `mad_count_new_device` for a new
   * device at `now`: the periods of `periodStarts` and the plan's limit. The function counts the
   * device as `count` would when the count stays within the limit, and otherwise raises
   * (`isMadLimitReached`), undoing the statement: `count` then decides on the transactional path,
   * with the grace period and the 402. So the one statement never passes the limit.
   */
  newDeviceCount(tenant: CountingTenant, now: Date): NewDeviceCount {
    const [billing, calendar] = this.periodStarts(tenant, now);
    return { billing, calendar: calendar ?? null, limit: tierDefinition(tenant.serviceTier).limits.maxMAD };
  }

  /** After a one-statement count committed with `current` devices in the billing period: the usage alerts, as `count` tells them. */
  countedNewDevice(tenant: CountingTenant, count: NewDeviceCount, current: number): void {
    this.alerts.notify(tenant.organizationId, count.billing, current, count.limit);
  }

  /**
   * Counts the device in the current period, in the attestation's unit of work. A new device
   * over the plan's limit after the grace period is refused with 402 (the transaction then rolls
   * the count back); devices already known keep working. `alreadyCounted` (read with
   * `mad_device_counted` for `periodStarts(tenant, now)`) skips the upserts, which would find the
   * device counted and change nothing.
   */
  async count(
    tenant: CountingTenant,
    deviceId: string,
    isNewDevice: boolean,
    now = new Date(),
    alreadyCounted = false,
  ) {
    const limit = tierDefinition(tenant.serviceTier).limits.maxMAD;
    if (alreadyCounted) return { counted: false, current: 0, limit, inGrace: false } satisfies MadOutcome;
    const [billing, calendar] = this.periodStarts(tenant, now);
    if (calendar) await this.counters.count(tenant.organizationId, calendar, deviceId);
    const row = await this.counters.count(tenant.organizationId, billing, deviceId);
    if (!row) return { counted: false, current: 0, limit, inGrace: false } satisfies MadOutcome;
    const current = row.activeDevices;
    // The alert's claim on the counter row waits for this transaction to end, so it sees the commit.
    this.alerts.notify(tenant.organizationId, billing, current, limit);
    if (limit === null || current <= limit)
      return { counted: true, current, limit, inGrace: false } satisfies MadOutcome;
    if (!isNewDevice) return { counted: true, current, limit, inGrace: false } satisfies MadOutcome;

    const overSince = row.overLimitSince ?? now;
    if (!row.overLimitSince) await this.counters.markOverLimit(tenant.organizationId, billing, now);
    if (now.getTime() - overSince.getTime() < MAD_GRACE_MS) {
      return { counted: true, current, limit, inGrace: true } satisfies MadOutcome;
    }
    throw quotaExceeded(limit, current - 1, `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/billing`);
  }
}
