import type { DataSource } from 'typeorm';

export interface FailureTrend {
  /** Failed attestations per code in the window, most frequent first. */
  failuresByCode: { code: string; count: number; lastSeen: Date }[];
  /** Per UTC day with failures, newest first: the total and the count per code. */
  dailyFailures: { date: string; total: number; byCode: Record<string, number> }[];
}

/**
 * Failed attestation events by code over the last `days` days, of an app or of one device (its
 * key id in that app): what app usage and device details show. One grouped query on the
 * `(app_id, created_at)` index; debug exchanges never fail into it.
 */
export async function failuresByDayAndCode(
  dataSource: DataSource,
  scope: { appId: string; keyId?: string; days: number },
): Promise<FailureTrend> {
  const rows = await dataSource.query<{ date: string; code: string; count: number; last_seen: Date }[]>(
    `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'utc'), 'YYYY-MM-DD') AS date,
            COALESCE(error_code, 'unknown') AS code, count(*)::int AS count, max(created_at) AS last_seen
       FROM device_events
      WHERE app_id = $1 AND result = 'failure' AND created_at >= now() - make_interval(days => $2)
        AND ($3::text IS NULL OR key_id = $3::text)
      GROUP BY 1, 2
      ORDER BY 1 DESC, 3 DESC, 2`,
    [scope.appId, scope.days, scope.keyId ?? null],
  );
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
