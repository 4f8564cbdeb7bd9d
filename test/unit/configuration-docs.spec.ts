// The configuration as documented: README's table, .env.example and the variables the code reads
// name the same set.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseEnv } from 'node:util';

const ROOT = process.cwd();

function readmeVariables(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Configuration'),
    readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1),
  );
  const names = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]));
  return [...new Set(names)].sort();
}

function exampleVariables(): string[] {
  return Object.keys(parseEnv(readFileSync(join(ROOT, '.env.example'), 'utf8'))).sort();
}

/** Variables the service and the CLI read: through loadConfig's readers or process.env directly. */
function sourceVariables(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.spec.ts')) {
        const text = readFileSync(path, 'utf8');
        for (const match of text.matchAll(/\b(?:optional|read[A-Za-z0-9]*)\(env, '([A-Z][A-Z0-9_]*)'/g))
          names.add(match[1]);
        for (const match of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)) names.add(match[1]);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return [...names].sort();
}

describe('the documented configuration', () => {
  it('.env.example lists exactly the variables of the README configuration table', () => {
    expect(readmeVariables().length).toBeGreaterThan(20);
    expect(exampleVariables()).toEqual(readmeVariables());
  });

  it('every variable the service or the CLI reads is in the README table (and so in .env.example)', () => {
    const read = sourceVariables();
    expect(read).toEqual(expect.arrayContaining(['PORT', 'HOST', 'METRICS_TOKEN', 'DATABASE_URL', 'LOG_LEVEL']));
    expect(read.filter((name) => !readmeVariables().includes(name))).toEqual([]);
  });

  it('npm pack names the client package as a directory (./packages/cli), never as a GitHub shorthand', () => {
    for (const file of ['README.md', 'docs/operations.md', 'packages/cli/README.md']) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/npm pack ([^\s`]+)/g)) {
        expect({ file, target: match[1] }).toEqual({ file, target: expect.stringMatching(/^\.{1,2}\//) });
      }
    }
  });
});
