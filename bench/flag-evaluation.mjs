// node bench/flag-evaluation.mjs [--devices 200000]
// What evaluating the bench's flag set costs on its own: the server's own evaluator (from dist/),
// compiled and planned as its flag store plans an app's flags, answering the flags row's requests
// (a new device id each, X-App-Version 3.1.0, named by a server's key) in a tight loop, with
// nothing else around it. Prints one JSON line: µs per answer (the median of 5 rounds) and how
// many rollout hashes an answer computes.
//
// GET /api/v1/flags passes the same global pipeline as GET /health and evaluates the set: the
// flags target (≥ 0.8 of /health's rate) leaves the route a quarter of /health's CPU per request
// for everything beyond /health, and bench/run.mjs prints that budget beside what the route spends
// and this figure. A tight loop keeps the evaluator's code and data in the caches, which the
// server, between requests, does not: the figure is a lower bound of what evaluation costs inside
// the server.
import { join } from 'node:path';
import { flagEnvironments } from './fixtures.mjs';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const index = args.indexOf('--devices');
const devices = index >= 0 ? Number(args[index + 1]) : 200_000;

const { compileFlagSet } = await import(join(root, 'dist/src/flags/evaluation/compile-flag.js'));
const { planFlagSet, evaluatePlannedJson } = await import(join(root, 'dist/src/flags/evaluation/flag-set-plan.js'));

const definitions = Array.from({ length: 50 }, (_, f) => ({
  id: `bench-flag-${f}`,
  key: `flag_${f}`,
  valueType: 'boolean',
  defaultValue: 'false',
  environments: flagEnvironments(f),
}));
const plan = planFlagSet(compileFlagSet(definitions));
// The context the flags row's requests give (src/flags/sdk-flags.controller.ts, deviceContext).
const contextOf = (n) => ({ deviceId: `bench-device-${n}`, appVersion: '3.1.0', attestationStatus: 'server' });

let sink = 0;
let next = 1;
const round = () => {
  const count = Math.max(1, Math.floor(devices / 5));
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) sink += evaluatePlannedJson(plan, 'production', contextOf(next++)).length;
  return Number(process.hrtime.bigint() - started) / count / 1000;
};
round(); // compiled first, as the server's warm-up compiles it
const rounds = Array.from({ length: 5 }, round).sort((a, b) => a - b);

// Rollout hashes one answer computes: each flag with a partial rollout buckets the device once
// (evaluate-flag.ts), and here each reaches it, as its first rule (app_version ≥ 2.0) passes.
const hashes = definitions.filter((flag) =>
  flag.environments.production.rules.some(
    (rule) => rule.rolloutPercentage !== null && rule.rolloutPercentage > 0 && rule.rolloutPercentage < 100,
  ),
).length;

console.log(
  JSON.stringify({
    usPerAnswer: Math.round(rounds[2] * 10) / 10,
    flags: definitions.length,
    rolloutHashes: hashes,
    answerBytes: evaluatePlannedJson(plan, 'production', contextOf(1)).length,
    sink: sink > 0,
  }),
);
