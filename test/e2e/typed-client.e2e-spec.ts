import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOrg, createUser, PASSWORD } from '../factories/identity.js';
import type { TestApp } from '../harness/test-app.js';
import { startListeningApp } from '../support/listening-app.js';

const root = new URL('../..', import.meta.url).pathname;
const smoke = join(root, 'test/client-smoke');
const generated = join(smoke, 'generated');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(command: string, args: string[]): Promise<Run> {
  return promisify(execFile)(command, args, { cwd: root }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

const tsc = (...args: string[]) => run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), ...args]);

/**
 * What a dashboard team does with the document: generate a client (openapi-typescript) from the
 * committed openapi.json (no service needed), write against it with openapi-fetch, compile with
 * tsc --strict and run it against the service, whose served document is the committed one.
 */
describe('typed client generated from the committed openapi.json', () => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    ({ t, baseUrl } = await startListeningApp());
    rmSync(generated, { recursive: true, force: true });
    rmSync(join(smoke, 'dist'), { recursive: true, force: true });
    mkdirSync(generated, { recursive: true });
    copyFileSync(join(root, 'openapi.json'), join(generated, 'openapi.json'));
    const generate = await run(process.execPath, [
      join(root, 'node_modules/openapi-typescript/bin/cli.js'),
      join(generated, 'openapi.json'),
      '--output',
      join(generated, 'api.d.ts'),
    ]);
    expect(generate.code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await t.close();
  });

  it('generates from the document the running service serves, but for its server URL', async () => {
    const { servers: committedServers, ...committed } = JSON.parse(
      readFileSync(join(root, 'openapi.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(committedServers).toEqual([{ url: 'http://localhost:3000' }]);
    const { servers, ...served } = (await fetch(`${baseUrl}/api/v1/openapi.json`).then((response) =>
      response.json(),
    )) as Record<string, unknown>;
    expect(servers).toEqual([{ url: expect.any(String) }]);
    expect(served).toEqual(committed);
  });

  it('types the answers: a field the document does not have fails to compile', async () => {
    writeFileSync(
      join(generated, 'probe.ts'),
      [
        "import type { components, paths } from './api.js';",
        "type Listed = paths['/api/v1/apps']['get']['responses'][200]['content']['application/json'];",
        'export const read = (apps: Listed): string => apps[0]?.bundleID ?? "";',
        "export const free = (entry: components['schemas']['AuditEntryResponse']): unknown => entry.metadata['any'];",
        '',
      ].join('\n'),
    );
    const probe = await tsc('-p', join(smoke, 'tsconfig.json'), '--noEmit');
    rmSync(join(generated, 'probe.ts'));
    // The misspelt field is refused, with the real one suggested...
    expect(probe.stdout).toMatch(/probe\.ts\(3,\d+\): error TS2551: Property 'bundleID' does not exist .* 'bundleId'/);
    // ...and that is the only error: the free-form object takes any key.
    expect(probe.stdout.trim().split('\n')).toHaveLength(1);
  }, 120_000);

  it('compiles the smoke program with tsc --strict and runs it: sign in, create an app, list apps', async () => {
    const org = await createOrg(t, { tier: 'pro' });
    const user = await createUser(t, { org, role: 'admin' });

    const compiled = await tsc('-p', join(smoke, 'tsconfig.json'));
    expect(compiled.stdout).toBe('');
    expect(compiled.code).toBe(0);

    const smokeRun = await run(process.execPath, [join(smoke, 'dist/smoke.js'), baseUrl, user.email, PASSWORD]);
    expect(smokeRun.stderr).toBe('');
    expect(smokeRun.code).toBe(0);
    const result = JSON.parse(smokeRun.stdout) as {
      signedIn: string;
      organization: string | null;
      createdId: string;
      maxRisk: number;
      listed: { id: string; bundleId: string; active: boolean; createdAt: string }[];
      fetchedBundleId: string | null;
      missingStatus: number;
      missingCode: string | null;
    };
    expect(result.signedIn).toBe(user.email);
    expect(result.organization).toBe(org.slug);
    expect(result.maxRisk).toBe(80);
    expect(result.listed).toHaveLength(1);
    expect(result.listed[0]).toMatchObject({ id: result.createdId, active: true });
    expect(result.fetchedBundleId).toBe(result.listed[0].bundleId);
    expect(result.missingStatus).toBe(404);
    expect(result.missingCode).toBe('not_found');
    const [row] = await t.sql<{ bundle_id: string }>('SELECT bundle_id FROM apps WHERE id = $1', [result.createdId]);
    expect(row.bundle_id).toBe(result.listed[0].bundleId);
  }, 120_000);
});
