// The targets of issue 22, each a figure of one bench run against its ceiling or limit.
// PASS or BELOW (or "not measured" when --only left a side out); never an exit status.

const round = (value) => Math.round(value * 100) / 100;

/**
 * `ceilings` and `memory` as bench/run.mjs gathers them; `results` its scenario rows, each with
 * the scenario's `name`.
 */
export function evaluateTargets({ ceilings, results, memory }) {
  const rate = (name) => results.find((row) => row.name === name)?.requestsPerSecond ?? null;
  const p99 = (name) => results.find((row) => row.name === name)?.p99Ms ?? null;
  const ratio = (numerator, denominator) =>
    numerator === null || denominator === null || !denominator ? null : round(numerator / denominator);

  const health = rate('reference');
  const flags = rate('flags');
  const flagsRatio = ratio(flags, health);
  const crypto = ceilings.crypto?.pairsPerSecond ?? null;
  const atLeast = (limit) => ({ targetText: `≥ ${limit}`, passes: (value) => value >= limit });
  const under = (limit, unit) => ({ targetText: `< ${limit} ${unit}`, passes: (value) => value < limit });

  const targets = [
    {
      name: 'health-vs-nest',
      title: 'GET /health / bare NestJS route',
      value: ratio(health, ceilings.bareNest?.requestsPerSecond ?? null),
      ...atLeast(0.9),
    },
    { name: 'flags-vs-health', title: 'GET /api/v1/flags / GET /health', value: flagsRatio, ...atLeast(0.8) },
    { name: 'flags-p99', title: 'GET /api/v1/flags p99', value: p99('flags'), unit: 'ms', ...under(8, 'ms') },
    {
      name: 'flags-304-vs-health',
      title: 'GET /api/v1/flags 304 / GET /health',
      value: ratio(rate('flags-304'), health),
      // "Faster still": above the full answer's ratio of the same run.
      targetText: `> GET /api/v1/flags (${flagsRatio ?? '-'})`,
      passes: (value) => flagsRatio !== null && value > flagsRatio,
    },
    {
      name: 'refresh-vs-crypto',
      title: 'refresh / crypto-only rate',
      value: ratio(rate('refresh'), crypto),
      ...atLeast(0.6),
    },
    {
      name: 'validate-vs-crypto',
      title: 'validate / crypto-only rate',
      value: ratio(rate('validate'), crypto),
      ...atLeast(0.4),
    },
    {
      name: 'idle-rss',
      title: 'server resident memory, idle',
      value: memory.idleRssMb,
      unit: 'MB',
      ...under(200, 'MB'),
    },
  ];
  return targets.map(({ passes, unit, ...target }) => ({
    ...target,
    display: target.value === null ? '-' : `${target.value}${unit ? ` ${unit}` : ''}`,
    verdict: target.value === null ? 'not measured' : passes(target.value) ? 'PASS' : 'BELOW',
  }));
}

export function formatTarget(target) {
  return `${target.title.padEnd(38)} ${target.display.padStart(8)}  target ${target.targetText.padEnd(28)} ${target.verdict}`;
}
