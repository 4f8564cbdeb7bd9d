// Compiles the TypeScript sources when dist/ is missing or older than any source file, and records
// the commit being built for X-Service-Commit. SWC only transpiles (a few seconds); the type check
// is `npm run typecheck`, part of `npm run lint`.
//
//   node scripts/build-if-needed.mjs               the development build: the service, the dev-only
//                                                  tools (tools/**, the App Attest fabricator the CLI's
//                                                  attest:demo-* commands load) and the command-line
//                                                  client (packages/cli/dist)
//   node scripts/build-if-needed.mjs --production  the service alone (what the Docker image ships)
//   --force                                        builds even when dist/ is up to date
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const marker = join(root, 'dist/COMMIT');
const production = process.argv.includes('--production');
const sources = [
  'src',
  'tools',
  'migrations',
  'ormconfig.ts',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  '.swcrc',
  'packages/cli/src',
  'packages/cli/package.json',
  'packages/cli/tsconfig.json',
];
const swc = join(root, 'node_modules/@swc/cli/bin/swc.js');
// The service through the Nest CLI's SWC builder (nest-cli.json: src, migrations and ormconfig.ts,
// minus tsconfig.build.json's exclusions, which keep tools/** out) into dist/.
const service = { args: [join(root, 'node_modules/@nestjs/cli/bin/nest.js'), 'build'], cwd: root };
const development = [
  // Dev-only: never part of the production build, so never in the image.
  { args: [swc, 'tools', '-d', 'dist', '--config-file', '.swcrc', '--ignore', '**/*.spec.ts', '-q'], cwd: root },
  {
    args: [swc, 'src', '-d', 'dist', '--strip-leading-paths', '--config-file', '../../.swcrc', '-q'],
    cwd: join(root, 'packages/cli'),
  },
];
const steps = production ? [service] : [service, ...development];

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestMtime(join(path, name))), stat.mtimeMs);
}

const builtAt = existsSync(marker) ? statSync(marker).mtimeMs : 0;
const sourcesAt = Math.max(...sources.map((entry) => join(root, entry)).filter(existsSync).map(newestMtime));
// A production build in dist/ lacks the development tools: the development build adds them.
const incomplete = !production && !existsSync(join(root, 'dist/tools'));
if (process.argv.includes('--force') || sourcesAt > builtAt || incomplete) {
  process.stderr.write(production ? 'Building (production)…\n' : 'Building…\n');
  // A production build starts from nothing, so no development tool from an earlier build remains.
  if (production) rmSync(join(root, 'dist'), { recursive: true, force: true });
  for (const { args, cwd } of steps) execFileSync(process.execPath, args, { cwd, stdio: 'inherit' });
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
