// Seeds the benchmark database directly (it is the bench's own throw-away embedded server) and
// fabricates App Attest devices whose chain the bench server trusts.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

const root = new URL('..', import.meta.url).pathname;
export const TEAM_ID = 'BENCHTEAM1';
export const ORG_COUNT = 20;

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

export async function loadFabricator() {
  return import(join(root, 'dist/tools/app-attest-fabricator/fabricator.js'));
}

export async function connect(dataDir) {
  const port = readFileSync(join(dataDir, 'postgres/port'), 'utf8').trim();
  const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/attestly` });
  await client.connect();
  return client;
}

/**
 * Enterprise organizations with one app each: enough budget that the limiter is not what is
 * measured. `label` tells sets apart (their names, slugs and bundle ids).
 */
export async function seedTenants(db, count = ORG_COUNT, label = 'app') {
  const apps = [];
  for (let i = 0; i < count; i++) {
    const { rows } = await db.query(
      `INSERT INTO organizations (name, slug, service_tier) VALUES ($1, $2, 'enterprise') RETURNING id`,
      [`Bench ${label} ${i}`, `bench-${label}-${i}-${randomUUID().slice(0, 8)}`],
    );
    const bundleId = `com.bench.${label}${i}`;
    const app = await db.query(
      `INSERT INTO apps (organization_id, app_name, bundle_id, team_id, is_primary) VALUES ($1, $2, $3, $4, true) RETURNING id`,
      [rows[0].id, `Bench ${i}`, bundleId, TEAM_ID],
    );
    apps.push({ organizationId: rows[0].id, appId: app.rows[0].id, bundleId });
  }
  return apps;
}

/** Single-use challenges stored as the service stores them, so each request can carry a fresh one. */
export async function seedChallenges(db, appId, count) {
  const challenges = Array.from({ length: count }, () => randomBytes(32).toString('base64'));
  for (let i = 0; i < challenges.length; i += 1000) {
    const slice = challenges.slice(i, i + 1000);
    await db.query(
      `INSERT INTO attestation_challenges (challenge_hash, app_id, expires_at)
       SELECT unnest($1::text[]), $2, now() + interval '1 hour'`,
      [slice.map(sha256), appId],
    );
  }
  return challenges;
}

/**
 * The stored `environments` of bench flag number `f`: 5 rules, one condition each, with a
 * percentage rollout on every other flag; enabled in production only. Also what
 * bench/flag-store-memory.mjs loads for 10,000 apps.
 */
export function flagEnvironments(f) {
  const rules = Array.from({ length: 5 }, (_, r) => ({
    id: randomUUID(),
    name: `rule ${r}`,
    priority: r,
    isActive: true,
    conditions: [
      [{ attribute: 'app_version', operator: 'greater_than_or_equal', value: `${r + 2}.0` }],
      [{ attribute: 'country', operator: 'in_list', value: 'DE,FR,IT,ES' }],
      [{ attribute: 'device_model', operator: 'starts_with', value: 'iPad' }],
      [{ attribute: 'risk_score', operator: 'greater_than', value: '90' }],
      [{ attribute: 'custom.plan', operator: 'equals', value: 'beta' }],
    ][r],
    rolloutPercentage: f % 2 === 0 ? 25 + r * 10 : null,
    value: 'true',
  }));
  const environment = (enabled) => ({ enabled, value: 'false', rules });
  return { production: environment(true), staging: environment(false), development: environment(false) };
}

/** 50 flags of 5 rules each on one app, with percentage rollout on half of them. */
export async function seedFlags(db, app) {
  const ids = [];
  for (let f = 0; f < 50; f++) {
    const { rows } = await db.query(
      `INSERT INTO feature_flags (organization_id, app_id, key, name, value_type, default_value, environments)
       VALUES ($1, $2, $3, $3, 'boolean', 'false', $4) RETURNING id`,
      [app.organizationId, app.appId, `flag_${f}`, JSON.stringify(flagEnvironments(f))],
    );
    ids.push(rows[0].id);
  }
  return ids;
}

/** A client address per request, so per-IP protection does not throttle a single load generator. */
export function clientAddress(n) {
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/** 100,000 devices active this month in one organization, counted as the attestation path counts them. */
export async function seedActiveDevices(db, app, count = 100_000) {
  await db.query(
    `INSERT INTO devices (organization_id, app_id, key_id, public_key_pem, environment, attestation_count)
     SELECT $1, $2, 'bench-key-' || n, 'unused', 'production', 1 FROM generate_series(1, $3) AS n`,
    [app.organizationId, app.appId, count],
  );
  await db.query(
    `INSERT INTO mad_devices (organization_id, period_start, device_id)
     SELECT $1, date_trunc('month', now() AT TIME ZONE 'utc')::date, id FROM devices WHERE app_id = $2 AND key_id LIKE 'bench-key-%'`,
    [app.organizationId, app.appId],
  );
  await db.query(
    `INSERT INTO mad_counters (organization_id, period_start, active_devices)
     VALUES ($1, date_trunc('month', now() AT TIME ZONE 'utc')::date, $2)
     ON CONFLICT (organization_id, period_start) DO UPDATE SET active_devices = mad_counters.active_devices + $2`,
    [app.organizationId, count],
  );
}

/** An `org:read` + `flags:read` API key of the organization, stored as the service stores keys (hashed). */
export async function seedApiKey(db, organizationId) {
  const key = `service_${randomBytes(32).toString('base64url')}`;
  await db.query(
    `INSERT INTO api_keys (organization_id, name, key_type, prefix, key_hash, scopes) VALUES ($1, 'bench', 'service', $2, $3, '{org:read,flags:read}')`,
    [organizationId, key.slice(0, 16), sha256(key)],
  );
  return key;
}
