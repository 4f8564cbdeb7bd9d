#!/usr/bin/env node
/**
 * The data-access check of `npm run lint` (decision 0070): SQL, TypeORM data access and
 * transactions live in repositories (`*.repository.ts`) and nowhere else; services, jobs and
 * controllers call repository methods inside a unit of work (src/database/unit-of-work.ts) and
 * never hold an `EntityManager`; tenant ids are branded only where the access layer or an
 * owner's repository establishes them; no feature splices another's SQL fragment into its text.
 *
 * EXCEPTIONS (scripts/sql-owners.mjs) lists, with the reason, the files outside repositories that may do one of these.
 * REMAINING lists files not yet moved to repositories: it may only shrink (a listed file that
 * passes fails the check, so the list is kept exact), and is empty when the move is done.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkDataAccess } from './sql-owners.mjs';

/** Files that still reach the database (or brand ids) outside a repository: only shrinks. */
const remaining = JSON.parse(readFileSync(new URL('./sql-owners-remaining.json', import.meta.url), 'utf8'));

const root = new URL('..', import.meta.url).pathname;
const files = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
const sources = files(join(root, 'src')).map((path) => [relative(root, path), readFileSync(path, 'utf8')]);
const result = checkDataAccess({ sources, remaining });

for (const [, found] of result.violations) {
  for (const line of found)
    console.log(`  error data-access: ${line} (only repositories reach the database: decision 0070)`);
}
for (const path of result.stale) {
  console.log(`  error stale-remaining: ${path} passes now: remove it from scripts/sql-owners-remaining.json`);
}
if (process.argv.includes('--list')) for (const path of result.remaining) console.log(path);
if (result.violations.length || result.stale.length) process.exit(1);
console.log(`data access: ${result.remaining.length} files still to move into repositories`);
