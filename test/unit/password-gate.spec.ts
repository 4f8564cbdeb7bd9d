import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * Every password check passes the password gate (src/auth/password-gate.ts), which owns the
 * failure budgets and the device cookie: a new sign-in path, re-authentication or password change
 * that compared a password anywhere else would skip the lockout and the known-browser rule.
 */
describe('the password gate', () => {
  const sources = files(join(root, 'src')).map((path) => ({
    path: relative(root, path),
    text: readFileSync(path, 'utf8'),
  }));

  it('is the only caller of verifyPassword and bcrypt.compare in src', () => {
    const callers = sources
      .filter(({ text }) => /\bverifyPassword\(|\.compare\(/.test(text))
      .map(({ path }) => path)
      .sort();
    expect(callers).toEqual(['src/auth/password-gate.ts', 'src/auth/passwords.ts']);
    const passwords = sources.find(({ path }) => path === 'src/auth/passwords.ts')!.text;
    expect(passwords).toMatch(/export async function verifyPassword/);
  });

  it('is what every password sign-in route goes through: AuthService.login, called with a gate attempt', () => {
    const logins = sources.filter(({ text }) => /\.auth\.login\(/.test(text)).map(({ path }) => path);
    expect(logins.sort()).toEqual(['src/auth/auth.controller.ts', 'src/auth/device-login/device-login.controller.ts']);
    for (const { path, text } of sources.filter(({ path }) => logins.includes(path))) {
      expect({ path, gated: /\.auth\.login\(this\.passwords\.attemptOf\(/.test(text) }).toEqual({ path, gated: true });
    }
  });
});
