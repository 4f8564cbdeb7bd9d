import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

const DISABLED = new Set(['none', 'false', '0', 'off']);

/**
 * Opens `url` in a browser when one can be expected to show it; true when a browser was started.
 * `BROWSER` names the command to use, or disables opening (`none`); without it, `open` on macOS,
 * `xdg-open` on Linux with a graphical session (over SSH it could start a text browser inside
 * the terminal the client is printing to), `start` on Windows.
 */
export function openBrowser(url: string, env: Env): boolean {
  const command = browserCommand(env);
  if (!command) return false;
  try {
    const child = spawn(command[0], [...command.slice(1), url], { stdio: 'ignore', detached: true, env: { ...env } });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

function browserCommand(env: Env): string[] | null {
  const chosen = env.BROWSER?.trim();
  if (chosen) return DISABLED.has(chosen.toLowerCase()) ? null : [chosen];
  if (process.platform === 'darwin') return ['open'];
  if (process.platform === 'win32') return ['cmd', '/c', 'start', '""'];
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
  return onPath('xdg-open', env) ? ['xdg-open'] : null;
}

function onPath(name: string, env: Env): boolean {
  return (env.PATH ?? '').split(delimiter).some((directory) => {
    if (!directory) return false;
    try {
      accessSync(join(directory, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
