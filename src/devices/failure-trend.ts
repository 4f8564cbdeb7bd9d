export interface FailureTrend {
  /** Failed attestations per code in the window, most frequent first. */
  failuresByCode: { code: string; count: number; lastSeen: Date }[];
  /** Per UTC day with failures, newest first: the total and the count per code. */
  dailyFailures: { date: string; total: number; byCode: Record<string, number> }[];
}

/** One (UTC day, code) group of failures, newest day first (`DevicesRepository.failureTrend`). */
export interface FailureTrendRow {
  date: string;
  code: string;
  count: number;
  last_seen: Date;
}

/** What app usage and device details show of the failures grouped by day and code. Pure. */
export function toFailureTrend(rows: readonly FailureTrendRow[]): FailureTrend {
  const byCode = new Map<string, { code: string; count: number; lastSeen: Date }>();
  const byDay = new Map<string, { date: string; total: number; byCode: Record<string, number> }>();
  for (const row of rows) {
    const code = byCode.get(row.code) ?? { code: row.code, count: 0, lastSeen: row.last_seen };
    code.count += row.count;
    if (row.last_seen > code.lastSeen) code.lastSeen = row.last_seen;
    byCode.set(row.code, code);
    const day = byDay.get(row.date) ?? { date: row.date, total: 0, byCode: {} };
    day.total += row.count;
    day.byCode[row.code] = row.count;
    byDay.set(row.date, day);
  }
  return {
    failuresByCode: [...byCode.values()].sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : 1)),
    dailyFailures: [...byDay.values()],
  };
}
