// GET /api/v1/flags with and without a million revoked debug tokens of another tenant in the table
// (issue 30): every instance rereads its deny set every 5 s, so that reread must cost what changed,
// not what tenants have accumulated (decision 0065). Measured in the same run, one after the other:
// the flag scenario on the bench tenants; then one INSERT … SELECT generate_series adds the rows
// (one in a hundred marked exchanged, which the deny set must hold; the rest created and revoked
// unused, as the flood of issue 30 made them); after two reread periods the flag scenario again,
// with the rereads happening under it. The ratio is p99 with the rows over p99 without.
import { requestsPerSecond, residentMemoryMb } from './server.mjs';
import { scenarios } from './scenarios.mjs';

/** How long the deny set waits between rereads (DenySet): after twice that, a reread has read the rows. */
const REREAD_MS = 5_000;

/**
 * `load(baseUrl, scenario)` is bench/run.mjs's autocannon run; `rows` how many revoked debug
 * tokens to insert (1,000,000; a few thousand in smoke mode, which also waits one reread period
 * instead of two). Returns the two measurements.
 */
export async function measureDenySetLoad({ server, context, load, rows, smoke = false, exchangedEvery = 100 }) {
  const flags = scenarios.find((scenario) => scenario.name === 'flags');
  const measure = async () => {
    const prepared = await flags.prepare(context);
    const result = await load(server.baseUrl, { ...flags, ...prepared });
    return {
      requestsPerSecond: requestsPerSecond(result),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      non2xx: result.non2xx,
      rssMb: residentMemoryMb(server.pid),
    };
  };
  const without = await measure();

  // Another tenant than the flag apps: the last bench organization.
  const tenant = context.apps.at(-1);
  const started = performance.now();
  await context.db.query(
    `INSERT INTO debug_tokens (organization_id, app_id, name, prefix, token_hash, revoked_at, last_used_at)
     SELECT $1, $2, 'bench flood', 'dbg_bench', 'bench-flood-' || g, now() - (g % 3600) * interval '1 second',
            CASE WHEN g % $4 = 0 THEN now() - interval '1 hour' END
       FROM generate_series(1, $3) AS g`,
    [tenant.organizationId, tenant.appId, rows, exchangedEvery],
  );
  const insertSeconds = Math.round((performance.now() - started) / 100) / 10;
  // Smoke mode proves the harness, not the figure: one period is enough for a reread to start.
  await new Promise((resolve) => setTimeout(resolve, (smoke ? 1 : 2) * REREAD_MS + 500));
  let withRows;
  try {
    withRows = await measure();
  } finally {
    await context.db.query(`DELETE FROM debug_tokens WHERE app_id = $1 AND name = 'bench flood'`, [tenant.appId]);
  }
  return {
    rows,
    exchanged: Math.floor(rows / exchangedEvery),
    insertSeconds,
    without,
    with: withRows,
    ratio: without.p99Ms ? Math.round((withRows.p99Ms / without.p99Ms) * 100) / 100 : null,
  };
}
