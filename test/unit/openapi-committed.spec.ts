import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;

/** A script under the tests' Node; the build is a no-op when dist/ is current. */
const node = (...args: string[]) =>
  promisify(execFile)(process.execPath, args, { cwd: root }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => error,
  );

describe('the committed OpenAPI document (openapi.json)', () => {
  // In a child process: Node's own loader takes the ~400 modules of the application far faster
  // than Jest's module registry would.
  it('is what the application describes today, built without a database (else run `npm run openapi`)', async () => {
    expect((await node('scripts/build-if-needed.mjs')).code).toBe(0);
    const check = await node('scripts/openapi.mjs', '--check');
    expect(check.stderr).toBe('');
    expect(check.code).toBe(0);
    const committed = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as {
      servers: unknown;
      paths: object;
    };
    expect(committed.servers).toEqual([{ url: 'http://localhost:3000' }]);
    expect(Object.keys(committed.paths).length).toBeGreaterThan(100);
  }, 120_000);
});
