import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './app-config.js';

function problem(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a configuration error');
}

describe('configuration', () => {
  it('defaults every optional variable', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.databaseUrl).toBeNull();
    expect(config.redisUrl).toBeNull();
    expect(config.sessionCookieSameSite).toBe('lax');
    expect(config.webhookAllowPrivateNetworks).toBe(false);
    expect(config.mailDir).toMatch(/var\/mail$/);
    expect(config.trustProxy).toBe('loopback');
    expect(config.apnsUrl).toBeNull();
    expect(config.pushEncryptionKey).toBeNull();
    expect(loadConfig({ PUSH_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }).pushEncryptionKey).toEqual(
      Buffer.alloc(32, 7),
    );
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy).toBe('10.0.0.0/8,loopback');
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({}).dnsServers).toEqual([]);
    expect(loadConfig({ DNS_SERVERS: '127.0.0.1:5353, 1.1.1.1, [::1]:53, 2606:4700::1111' }).dnsServers).toEqual([
      '127.0.0.1:5353',
      '1.1.1.1',
      '[::1]:53',
      '2606:4700::1111',
    ]);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT must be an integer from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT must be an integer from 0 to 65535'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must use postgres:// or postgresql://'],
    [{ REDIS_URL: 'nope' }, 'REDIS_URL must be a URL'],
    [{ BASE_URL: 'ftp://x' }, 'BASE_URL must use http:// or https://'],
    [{ SESSION_SECRET: 'short' }, 'SESSION_SECRET must be at least 32 characters'],
    [{ SESSION_COOKIE_SAMESITE: 'none' }, 'SESSION_COOKIE_SAMESITE may be none only when BASE_URL is https'],
    [{ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'maybe' }, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS must be true or false'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT must be json or pretty'],
    [
      { DNS_SERVERS: 'dns.example.com' },
      'DNS_SERVERS must be comma-separated IP addresses, each optionally with :port',
    ],
    [
      { DNS_SERVERS: '127.0.0.1:99999' },
      'DNS_SERVERS must be comma-separated IP addresses, each optionally with :port',
    ],
    [{ APNS_URL: 'h2://x' }, 'APNS_URL must use http:// or https://'],
    [
      { PUSH_ENCRYPTION_KEY: 'c2hvcnQ=' },
      'PUSH_ENCRYPTION_KEY must be the base64 of 32 bytes (openssl rand -base64 32)',
    ],
    [{ APP_ATTEST_ROOT_CA: '/nonexistent.pem' }, 'APP_ATTEST_ROOT_CA names /nonexistent.pem, which cannot be read'],
    [{ JWT_PRIVATE_KEY: 'abc' }, 'JWT_PRIVATE_KEY must be a PEM private key'],
    [
      { TRUST_PROXY: 'everyone' },
      'TRUST_PROXY must be true, false, a hop count, or addresses/CIDRs (loopback, linklocal, uniquelocal allowed)',
    ],
    [{ BCRYPT_ROUNDS: '3' }, 'BCRYPT_ROUNDS must be an integer from 4 to 15'],
    [
      { DASHBOARD_ORIGINS: 'https://ok.example, not a url' },
      'DASHBOARD_ORIGINS has "not a url", which is not an origin like https://app.example.com',
    ],
  ])('names the variable in one line for %j', (env, message) => {
    expect(problem(env)).toBe(message);
  });
});
