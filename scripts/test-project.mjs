// `npm run test:unit -- <files> [jest options]` and `npm run test:e2e -- …`: `npm test` with the
// caller's arguments first and `--selectProjects <project>` last. Jest's --selectProjects takes
// every word after it as a project name, so a file given after it was read as one and the whole
// project ran.
import { spawn } from 'node:child_process';

const [project, ...args] = process.argv.slice(2);
const npm = process.env.npm_execpath;
const [command, prefix] = npm ? [process.execPath, [npm]] : ['npm', []];
const child = spawn(command, [...prefix, 'test', '--', ...args, '--selectProjects', project], {
  stdio: 'inherit',
  shell: !npm && process.platform === 'win32',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
