// `.env` as a Nest user expects it: read by `npm start` and `npm run cli` from the directory they
// run in, below the real environment. Real processes, run from a directory holding a `.env`.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, dropTestDatabase } from '../harness/database.js';
import { freePort } from '../support/server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('.env', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'attestly-dotenv-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  function cli(
    env: Record<string, string>,
    ...args: string[]
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [join(ROOT, 'dist/src/cli/main.js'), ...args],
        { cwd: work, timeout: 60_000, env: { PATH: process.env.PATH, ...env } },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      );
    });
  }

  it('the CLI reads .env from the directory it runs in; a variable set in the environment wins; a bad value is one line', async () => {
    writeFileSync(join(work, '.env'), `# local settings\nDATA_DIR=${join(work, 'from-dotenv')}\nLOG_LEVEL=silent\n`);
    const fromFile = await cli({}, 'attest:demo-root');
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toEqual({
      rootCaPath: join(work, 'from-dotenv', 'demo-app-attest', 'root.pem'),
    });

    const fromEnv = await cli({ DATA_DIR: join(work, 'from-env') }, 'attest:demo-root');
    expect(JSON.parse(fromEnv.stdout)).toEqual({ rootCaPath: join(work, 'from-env', 'demo-app-attest', 'root.pem') });

    writeFileSync(join(work, '.env'), 'LOG_LEVEL=loud\n');
    const bad = await cli({}, 'attest:demo-root');
    expect({ code: bad.code, stdout: bad.stdout }).toEqual({ code: 1, stdout: '' });
    expect(bad.stderr).toBe(
      'attest:demo-root: Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent\n',
    );
  });

  it('npm start listens on the PORT of .env and takes SERVICE_COMMIT from the environment over the file', async () => {
    const database = await createTestDatabase();
    const port = await freePort();
    writeFileSync(
      join(work, '.env'),
      `PORT=${port}\nHOST=127.0.0.1\nSERVICE_COMMIT=from-dotenv\nDATABASE_URL=${database.url}\nLOG_LEVEL=warn\n`,
    );
    const child = spawn(process.execPath, [join(ROOT, 'dist/src/main.js')], {
      cwd: work,
      env: { PATH: process.env.PATH, SERVICE_COMMIT: 'from-environment' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | string>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
    );
    try {
      let health: Response | null = null;
      const deadline = Date.now() + 90_000;
      while (!health) {
        if (child.exitCode !== null) throw new Error(`the service exited: ${output}`);
        if (Date.now() > deadline) throw new Error(`the service did not listen on ${port}: ${output}`);
        health = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
        if (!health) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(health.status).toBe(200);
      expect(((await health.json()) as { commit: string }).commit).toBe('from-environment');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await dropTestDatabase(database.name);
    }
  }, 120_000);
});
