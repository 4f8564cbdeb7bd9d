// docs/security.md names a test for every claim: each named test must exist, in the named file.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;
const doc = readFileSync(join(root, 'docs/security.md'), 'utf8');
const references = [...doc.matchAll(/^- Test: `([^`]+)` › (.+)$/gm)].map(([, file, name]) => ({
  file,
  name: name.trim(),
}));

describe('docs/security.md', () => {
  it('names tests for its claims', () => {
    expect(references.length).toBeGreaterThan(40);
  });

  it('names only tests that exist, by their exact name, in the file it gives', () => {
    const missing = references.filter(({ file, name }) => {
      const path = join(root, file);
      if (!existsSync(path)) return true;
      const source = readFileSync(path, 'utf8');
      return !["'", '"', '`'].some((quote) => source.includes(`${quote}${name}${quote}`));
    });
    expect(missing).toEqual([]);
  });
});
