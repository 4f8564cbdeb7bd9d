// `npm run lint`: every check below, run side by side (as many at once as the machine has cores),
// each one's output printed whole when it ends. Any failure fails the lint; all checks always run,
// so one run reports every problem. The checks are independent: three of them build a TypeScript
// program of their own (tsc, ESLint's typed rules, the response schemas), single-threaded each,
// so in sequence one core did all the work.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { delimiter, join } from 'node:path';

const PRETTIER_FILES = [
  'src/**/*.ts',
  'tools/**/*.ts',
  'test/**/*.ts',
  'migrations/**/*.ts',
  'packages/*/src/**/*.ts',
  'packages/*/test/**/*.ts',
  'ormconfig.ts',
];

/** The longest first, so the short ones fill in beside them. */
const CHECKS = [
  { name: 'ESLint', command: ['eslint', '--max-warnings', '0', '.'] },
  { name: 'typecheck', command: ['tsc', '-p', 'tsconfig.json', '--noEmit'] },
  { name: 'response schemas', command: [process.execPath, 'scripts/response-schemas.mjs', '--check'] },
  { name: 'Prettier', command: ['prettier', '--check', ...PRETTIER_FILES] },
  { name: 'boundaries', command: [process.execPath, 'scripts/check-boundaries.mjs'] },
  { name: 'data access', command: [process.execPath, 'scripts/check-sql-owners.mjs'] },
  { name: 'unused exports', command: ['knip', '--include', 'exports,types,nsExports,nsTypes,duplicates'] },
];

const root = new URL('..', import.meta.url).pathname;
// The project's own tools, also when this script is run without npm.
const env = { ...process.env, PATH: [join(root, 'node_modules/.bin'), process.env.PATH].join(delimiter) };
const lanes = Math.max(1, Math.min(availableParallelism(), CHECKS.length));

function run({ name, command: [file, ...args] }) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const ok = code === 0;
      process.stdout.write(
        `== lint: ${name} ${ok ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`} in ${seconds} s\n`,
      );
      if (!ok || process.env.LINT_VERBOSE) process.stdout.write(Buffer.concat(output));
      resolve(ok);
    });
  });
}

const queue = [...CHECKS];
const results = await Promise.all(
  Array.from({ length: lanes }, async () => {
    const passed = [];
    while (queue.length) passed.push(await run(queue.shift()));
    return passed;
  }),
);
process.exitCode = results.flat().every(Boolean) ? 0 : 1;
