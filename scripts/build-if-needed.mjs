// Compiles the TypeScript sources (`nest build`) when dist/ is missing or older than any source file, and
// records the commit being built for X-Service-Commit.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const marker = join(root, 'dist/COMMIT');
const sources = [
  'src',
  'tools',
  'migrations',
  'ormconfig.ts',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  'packages/cli/src',
  'packages/cli/package.json',
  'packages/cli/tsconfig.json',
];
// The service through the Nest CLI (nest-cli.json: tsc with tsconfig.build.json), then the
// command-line client's own package (packages/cli, built to packages/cli/dist) with plain tsc.
const steps = [
  [join(root, 'node_modules/@nestjs/cli/bin/nest.js'), 'build'],
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'packages/cli/tsconfig.json')],
];

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestMtime(join(path, name))), stat.mtimeMs);
}

const builtAt = existsSync(marker) ? statSync(marker).mtimeMs : 0;
const sourcesAt = Math.max(...sources.map((entry) => join(root, entry)).filter(existsSync).map(newestMtime));
if (process.argv.includes('--force') || sourcesAt > builtAt) {
  process.stderr.write('Building…\n');
  try {
    for (const args of steps) execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  } catch (error) {
    // tsc still emits JavaScript on type errors; the test run type-checks through lint and ts-jest,
    // so it may go on with that output. Everything else stops here.
    if (!process.argv.includes('--allow-type-errors')) throw error;
    process.stderr.write('Type errors above; continuing with the emitted JavaScript.\n');
  }
  let commit = process.env.SERVICE_COMMIT || 'unknown';
  if (!process.env.SERVICE_COMMIT) {
    try {
      commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    } catch {
      // not a git checkout: the commit stays unknown
    }
  }
  writeFileSync(marker, `${commit}\n`);
}
