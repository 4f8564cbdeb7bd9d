/**
 * The billing period an instant falls in. Free (and any plan without a provider cycle): the UTC
 * calendar month. Paid plans with a provider cycle: the month ending at `currentPeriodEnd`.
 */
export interface BillingPeriod {
  start: Date;
  end: Date;
}

export function calendarMonth(now: Date): BillingPeriod {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end };
}

export function billingPeriod(now: Date, tier: string, currentPeriodEnd: Date | null): BillingPeriod {
  if (tier === 'free' || !currentPeriodEnd || currentPeriodEnd.getTime() <= now.getTime()) return calendarMonth(now);
  const start = new Date(currentPeriodEnd);
  start.setUTCMonth(start.getUTCMonth() - 1);
  if (start.getTime() > now.getTime()) return calendarMonth(now);
  return { start, end: new Date(currentPeriodEnd) };
}

/** The `date` key of a period start, as stored in mad_counters. */
export function periodKey(date: Date): string {
  return date.toISOString().slice(0, 10);
}
