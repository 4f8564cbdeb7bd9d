import { describe, expect, it } from '@jest/globals';
import { billingPeriod, calendarMonth, periodKey } from './billing-period.js';

describe('billing period', () => {
  const now = new Date('2026-11-21T12:00:00Z');

  it('is the UTC calendar month on Free', () => {
    const period = billingPeriod(now, 'free', new Date('2026-12-05T00:00:00Z'));
    expect(periodKey(period.start)).toBe('2026-11-01');
    expect(period.end.toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('follows the provider cycle on a paid plan: the month ending at currentPeriodEnd', () => {
    const period = billingPeriod(now, 'basic', new Date('2026-12-05T09:30:00Z'));
    expect(period.start.toISOString()).toBe('2026-11-05T09:30:00.000Z');
    expect(period.end.toISOString()).toBe('2026-12-05T09:30:00.000Z');
  });

  it('falls back to the calendar month when the cycle has lapsed or is unknown', () => {
    expect(billingPeriod(now, 'basic', null)).toEqual(calendarMonth(now));
    expect(billingPeriod(now, 'basic', new Date('2026-11-01T00:00:00Z'))).toEqual(calendarMonth(now));
  });

  it('handles the turn of the year', () => {
    const period = calendarMonth(new Date('2026-12-31T23:59:59Z'));
    expect(period.end.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});
