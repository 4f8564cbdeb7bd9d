import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './app-config.js';
import { loadEnvFile } from './env-file.js';

describe('.env', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attestly-env-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function file(text: string): string {
    const path = join(dir, `${Math.random().toString(36).slice(2)}.env`);
    writeFileSync(path, text);
    return path;
  }

  it('fills the variables the environment does not set; a variable set in the environment wins', () => {
    const env: Record<string, string | undefined> = { PORT: '4000', LOG_LEVEL: '' };
    const path = file(
      [
        '# a comment',
        'PORT=3999',
        'BASE_URL="https://attestly.example.com"',
        "SERVICE_COMMIT='abc123' # trailing comment",
        'LOG_LEVEL=debug',
        'export DATA_DIR=/srv/attestly',
        '',
      ].join('\n'),
    );
    expect(loadEnvFile(path, env)).toBe(path);
    expect(env).toEqual({
      PORT: '4000',
      // Set, even empty, in the environment: the environment's value stands.
      LOG_LEVEL: '',
      BASE_URL: 'https://attestly.example.com',
      SERVICE_COMMIT: 'abc123',
      DATA_DIR: '/srv/attestly',
    });
    const config = loadConfig(env);
    expect(config.port).toBe(4000);
    expect(config.baseUrl).toBe('https://attestly.example.com');
    expect(config.serviceCommit).toBe('abc123');
    expect(config.dataDir).toBe('/srv/attestly');
  });

  it('is optional: without the file nothing changes', () => {
    const env = { PORT: '1234' };
    expect(loadEnvFile(join(dir, 'missing.env'), env)).toBeNull();
    expect(env).toEqual({ PORT: '1234' });
  });

  it("an invalid value from the file stops the start with the configuration's one line naming the variable", () => {
    const env: Record<string, string | undefined> = {};
    loadEnvFile(file('PORT=not-a-port\n'), env);
    expect(() => loadConfig(env)).toThrow(new ConfigError('PORT', 'must be an integer from 0 to 65535'));
  });

  (userInfo().uid === 0 ? it.skip : it)('an unreadable file is a one-line configuration error', () => {
    const path = file('PORT=1\n');
    chmodSync(path, 0o000);
    expect(() => loadEnvFile(path, {})).toThrow(ConfigError);
    expect(() => loadEnvFile(path, {})).toThrow(/^\.env \(.*\) cannot be read/);
  });
});
