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

/** Days in a UTC month (`month` 0-11; any integer, carried into the year). */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * `date` moved by `months` calendar months, on the cycle's anchor day clamped to the length of the
 * month it lands in, at the same time of day: 2027-03-31 one month back is 2027-02-28, and
 * 2027-02-28 one month on, anchored on the 31st, is 2027-03-31. Plain `setUTCMonth` overflows
 * instead (2027-03-31 back a month is "2027-02-31", that is 2027-03-03). `anchorDay` (1-31)
 * defaults to the day of `date`.
 */
export function shiftByMonths(date: Date, months: number, anchorDay: number = date.getUTCDate()): Date {
  if (!Number.isInteger(months)) throw new RangeError(`months must be an integer, got ${months}`);
  if (!Number.isInteger(anchorDay) || anchorDay < 1 || anchorDay > 31) {
    throw new RangeError(`anchorDay must be an integer from 1 to 31, got ${anchorDay}`);
  }
  const monthIndex = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const year = Math.floor(monthIndex / 12);
  const month = monthIndex - year * 12;
  const day = Math.min(anchorDay, daysInMonth(year, month));
  return new Date(
    Date.UTC(
      year,
      month,
      day,
      date.getUTCHours(),
      date.getUTCMinutes(),
      date.getUTCSeconds(),
      date.getUTCMilliseconds(),
    ),
  );
}

/**
 * The one place a billing period is computed. On a paid plan whose provider cycle is running, the
 * period ends at `currentPeriodEnd` and starts one calendar month before it, on the cycle's anchor
 * day (the day of month the subscription renews on; the end's own day when unknown) clamped to
 * the month's end. Otherwise, and when the provider's period is longer than a month, the UTC
 * calendar month.
 */
export function billingPeriod(
  now: Date,
  tier: string,
  currentPeriodEnd: Date | null,
  anchorDay?: number | null,
): BillingPeriod {
  if (tier === 'free' || !currentPeriodEnd || currentPeriodEnd.getTime() <= now.getTime()) return calendarMonth(now);
  const start = shiftByMonths(currentPeriodEnd, -1, anchorDay ?? currentPeriodEnd.getUTCDate());
  if (start.getTime() > now.getTime()) return calendarMonth(now);
  return { start, end: new Date(currentPeriodEnd) };
}

/** The `date` key of a period start, as stored in mad_counters. */
export function periodKey(date: Date): string {
  return date.toISOString().slice(0, 10);
}
