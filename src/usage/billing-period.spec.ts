import { describe, expect, it } from '@jest/globals';
import { billingPeriod, calendarMonth, periodKey, shiftByMonths } from './billing-period.js';

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

  describe('at month ends and in leap years', () => {
    const startOf = (end: string, anchorDay?: number) =>
      billingPeriod(
        new Date(new Date(end).getTime() - 3_600_000),
        'basic',
        new Date(end),
        anchorDay,
      ).start.toISOString();

    it.each([
      ['2027-03-31T00:00:00.000Z', '2027-02-28T00:00:00.000Z'],
      ['2026-12-31T08:15:00.000Z', '2026-11-30T08:15:00.000Z'],
      ['2027-05-31T00:00:00.000Z', '2027-04-30T00:00:00.000Z'],
      ['2024-03-31T00:00:00.000Z', '2024-02-29T00:00:00.000Z'],
      ['2024-03-29T00:00:00.000Z', '2024-02-29T00:00:00.000Z'],
      ['2027-01-31T00:00:00.000Z', '2026-12-31T00:00:00.000Z'],
      ['2027-03-15T10:00:00.000Z', '2027-02-15T10:00:00.000Z'],
    ])('a period ending %s starts %s, clamped to the end of the month before', (end, start) => {
      expect(startOf(end)).toBe(start);
    });

    it('starts on the anchor day when the end was clamped: a cycle on the 31st ending Feb 28 began Jan 31', () => {
      expect(startOf('2027-02-28T00:00:00.000Z', 31)).toBe('2027-01-31T00:00:00.000Z');
      expect(startOf('2024-02-29T00:00:00.000Z', 31)).toBe('2024-01-31T00:00:00.000Z');
      expect(startOf('2027-04-30T00:00:00.000Z', 31)).toBe('2027-03-31T00:00:00.000Z');
      expect(startOf('2024-02-29T00:00:00.000Z', 30)).toBe('2024-01-30T00:00:00.000Z');
    });

    it('walks a cycle anchored on the 31st through short months without drifting', () => {
      const anchor = new Date('2027-01-31T12:00:00.000Z');
      const ends = [1, 2, 3, 4, 12, 13].map((months) => shiftByMonths(anchor, months, 31).toISOString().slice(0, 10));
      expect(ends).toEqual(['2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31', '2028-01-31', '2028-02-29']);
      expect(shiftByMonths(new Date('2024-02-29T00:00:00Z'), 12).toISOString()).toBe('2025-02-28T00:00:00.000Z');
    });

    it('keeps consecutive periods contiguous: each starts where the previous ended', () => {
      let end = new Date('2026-10-31T00:00:00.000Z');
      for (let i = 0; i < 24; i++) {
        const next = shiftByMonths(end, 1, 31);
        expect(billingPeriod(new Date(next.getTime() - 1), 'professional', next, 31).start).toEqual(end);
        end = next;
      }
    });

    it('refuses an anchor day outside 1-31', () => {
      expect(() => shiftByMonths(new Date(), -1, 0)).toThrow(RangeError);
      expect(() => shiftByMonths(new Date(), -1, 32)).toThrow(RangeError);
    });
  });
});
