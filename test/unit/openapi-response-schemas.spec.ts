import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;

describe('src/openapi/response-schemas.generated.ts', () => {
  it('is what the route handlers return today (else run `npm run openapi:responses`)', async () => {
    const check = await promisify(execFile)(process.execPath, ['scripts/response-schemas.mjs', '--check'], {
      cwd: root,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(check.stderr).toBe('');
    expect(check.code).toBe(0);
  }, 120_000);
});
