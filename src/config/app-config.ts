import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The whole runtime configuration, read once from the environment (DESIGN.md section 1). */
export interface AppConfig {
  readonly port: number;
  /** Address the HTTP server listens on (HOST, default 0.0.0.0: every interface). */
  readonly host: string;
  readonly baseUrl: string;
  /** Null: the process starts its own embedded PostgreSQL under `dataDir`. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly redisUrl: string | null;
  readonly sessionSecret: string | null;
  /** Master secret for SSO client secrets at rest (SSO_SECRET_KEY); null: generated once and kept in the database. */
  readonly ssoSecretKey: string | null;
  readonly smtpUrl: string | null;
  readonly mailDir: string;
  readonly appAttestRootCaPath: string;
  readonly jwtPrivateKey: string | null;
  readonly serviceCommit: string;
  readonly dashboardOrigins: readonly string[];
  readonly sessionCookieSameSite: 'lax' | 'strict' | 'none';
  readonly webhookAllowPrivateNetworks: boolean;
  /**
   * DNS servers that check SSO domain ownership (DNS_SERVERS, comma-separated `address` or
   * `address:port`); empty: the system's resolvers.
   */
  readonly dnsServers: readonly string[];
  readonly stripeSecretKey: string | null;
  readonly stripeWebhookSecret: string | null;
  /** Where the Stripe SDK sends API calls (STRIPE_API_URL, default https://api.stripe.com). */
  readonly stripeApiUrl: string;
  /**
   * Where every push goes instead of Apple's hosts (APNS_URL; unset: api.push.apple.com or
   * api.sandbox.push.apple.com by each app's setting). For a test server or an egress proxy.
   */
  readonly apnsUrl: string | null;
  /**
   * Key that encrypts stored APNs signing keys (PUSH_ENCRYPTION_KEY, base64 of 32 bytes; unset:
   * generated once and kept in the database).
   */
  readonly pushEncryptionKey: Buffer | null;
  readonly logLevel: LogLevel;
  /** `json` (default): one JSON object per line; `pretty`: coloured lines for a developer's terminal. */
  readonly logFormat: LogFormat;
  /** bcrypt cost factor for passwords (BCRYPT_ROUNDS, default 12; tests lower it for speed). */
  readonly bcryptRounds: number;
  /** Apps whose compiled flags one instance keeps in memory; the least recently asked go first. */
  readonly flagStoreMaxApps: number;
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (per-IP limits, audit):
   * Express's `trust proxy` value. Default `loopback`.
   */
  readonly trustProxy: boolean | number | string;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export type LogFormat = 'json' | 'pretty';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The package root: compiled code runs from dist/src, sources from src. */
const here = dirname(fileURLToPath(import.meta.url));
export const PROJECT_ROOT = resolve(here, here.includes('/dist/') ? '../../..' : '../..');

export const DEFAULT_APP_ATTEST_ROOT_CA = resolve(
  PROJECT_ROOT,
  'src/attestation/app-attest/apple-app-attestation-root-ca.pem',
);

/** A configuration problem, reported as one line naming the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): AppConfig {
  const port = readPort(env);
  const dataDir = resolve(optional(env, 'DATA_DIR') ?? './var');
  const baseUrl = readUrl(env, 'BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const sameSite = optional(env, 'SESSION_COOKIE_SAMESITE') ?? 'lax';
  if (sameSite !== 'lax' && sameSite !== 'strict' && sameSite !== 'none') {
    throw new ConfigError('SESSION_COOKIE_SAMESITE', 'must be one of lax, strict, none');
  }
  if (sameSite === 'none' && !baseUrl.startsWith('https:')) {
    throw new ConfigError('SESSION_COOKIE_SAMESITE', 'may be none only when BASE_URL is https');
  }
  const logLevel = (optional(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const logFormat = optional(env, 'LOG_FORMAT') ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'pretty') {
    throw new ConfigError('LOG_FORMAT', 'must be json or pretty');
  }
  const sessionSecret = optional(env, 'SESSION_SECRET');
  if (sessionSecret !== undefined && sessionSecret.length < 32) {
    throw new ConfigError('SESSION_SECRET', 'must be at least 32 characters');
  }
  const ssoSecretKey = optional(env, 'SSO_SECRET_KEY');
  if (ssoSecretKey !== undefined && ssoSecretKey.length < 32) {
    throw new ConfigError('SSO_SECRET_KEY', 'must be at least 32 characters');
  }
  return {
    port,
    host: optional(env, 'HOST') ?? '0.0.0.0',
    baseUrl: baseUrl.replace(/\/+$/, ''),
    databaseUrl: readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir,
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    sessionSecret: sessionSecret ?? null,
    ssoSecretKey: ssoSecretKey ?? null,
    smtpUrl: readUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailDir: resolve(optional(env, 'MAIL_DIR') ?? resolve(dataDir, 'mail')),
    appAttestRootCaPath: readPemPath(env),
    jwtPrivateKey: readPrivateKey(env),
    serviceCommit: optional(env, 'SERVICE_COMMIT') ?? buildCommit(),
    dashboardOrigins: readOrigins(env),
    sessionCookieSameSite: sameSite,
    webhookAllowPrivateNetworks: readBoolean(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    dnsServers: readDnsServers(env),
    stripeSecretKey: optional(env, 'STRIPE_SECRET_KEY') ?? null,
    stripeWebhookSecret: optional(env, 'STRIPE_WEBHOOK_SECRET') ?? null,
    stripeApiUrl: readUrl(env, 'STRIPE_API_URL', ['http:', 'https:']) ?? 'https://api.stripe.com',
    apnsUrl: readUrl(env, 'APNS_URL', ['http:', 'https:']),
    pushEncryptionKey: readKey32(env, 'PUSH_ENCRYPTION_KEY'),
    logLevel,
    logFormat,
    bcryptRounds: readInteger(env, 'BCRYPT_ROUNDS', 12, 4, 15),
    flagStoreMaxApps: readInteger(env, 'FLAG_STORE_MAX_APPS', 5_000, 10, 1_000_000),
    trustProxy: readTrustProxy(env),
  };
}

/** `1.1.1.1`, `127.0.0.1:5353`, `2606:4700::1111` or `[::1]:5353`, as node:dns `setServers` takes them. */
function readDnsServers(env: Env): string[] {
  const raw = optional(env, 'DNS_SERVERS');
  if (raw === undefined) return [];
  const servers = raw.split(',').map((entry) => entry.trim());
  for (const server of servers) {
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)|([0-9a-fA-F:]+))(?::(\d{1,5}))?$/.exec(server);
    const address = match?.[1] ?? match?.[2] ?? match?.[3];
    const port = match?.[4] === undefined ? 53 : Number(match[4]);
    if (!address || isIP(address) === 0 || port < 1 || port > 65535 || (match?.[3] && match[4] !== undefined)) {
      throw new ConfigError('DNS_SERVERS', 'must be comma-separated IP addresses, each optionally with :port');
    }
  }
  return servers;
}

function readTrustProxy(env: Env): boolean | number | string {
  const raw = optional(env, 'TRUST_PROXY');
  if (raw === undefined) return 'loopback';
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((entry) => entry.trim());
  const named = new Set(['loopback', 'linklocal', 'uniquelocal']);
  if (entries.every((entry) => named.has(entry) || /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry)))
    return entries.join(',');
  throw new ConfigError(
    'TRUST_PROXY',
    'must be true, false, a hop count, or addresses/CIDRs (loopback, linklocal, uniquelocal allowed)',
  );
}

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function readPort(env: Env): number {
  const raw = optional(env, 'PORT');
  if (raw === undefined) return 3000;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new ConfigError('PORT', 'must be an integer from 0 to 65535');
  return port;
}

function readUrl(env: Env, name: string, protocols: string[]): string | null {
  const raw = optional(env, name);
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.map((p) => p.replace(':', '://')).join(' or ')}`);
  }
  return raw;
}

function readKey32(env: Env, name: string): Buffer | null {
  const raw = optional(env, name);
  if (raw === undefined) return null;
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError(name, 'must be the base64 of 32 bytes (openssl rand -base64 32)');
  return key;
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(name, 'must be true or false');
}

function readOrigins(env: Env): string[] {
  const raw = optional(env, 'DASHBOARD_ORIGINS');
  if (raw === undefined) return [];
  return raw.split(',').map((entry) => {
    const origin = entry.trim();
    try {
      const url = new URL(origin);
      if (url.origin !== origin.replace(/\/$/, '')) throw new Error('not an origin');
      return url.origin;
    } catch {
      throw new ConfigError(
        'DASHBOARD_ORIGINS',
        `has "${origin}", which is not an origin like https://app.example.com`,
      );
    }
  });
}

function readPemPath(env: Env): string {
  const raw = optional(env, 'APP_ATTEST_ROOT_CA');
  const path = raw === undefined ? DEFAULT_APP_ATTEST_ROOT_CA : resolve(raw);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new ConfigError('APP_ATTEST_ROOT_CA', `names ${path}, which cannot be read`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError('APP_ATTEST_ROOT_CA', `names ${path}, which holds no PEM certificate`);
  }
  return path;
}

function readPrivateKey(env: Env): string | null {
  const raw = optional(env, 'JWT_PRIVATE_KEY');
  if (raw === undefined) return null;
  const pem = raw.replace(/\\n/g, '\n');
  if (!pem.includes('PRIVATE KEY-----')) throw new ConfigError('JWT_PRIVATE_KEY', 'must be a PEM private key');
  return pem;
}

function buildCommit(): string {
  try {
    return readFileSync(resolve(PROJECT_ROOT, 'dist/COMMIT'), 'utf8').trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}
