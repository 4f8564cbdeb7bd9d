#!/usr/bin/env node
/**
 * The data-access check of `npm run lint` (decision 0070): SQL, TypeORM data access and
 * transactions live in repositories (`*.repository.ts`) and nowhere else; services, jobs and
 * controllers call repository methods inside a unit of work (src/database/unit-of-work.ts) and
 * never hold an `EntityManager`; tenant ids are branded only where the access layer or an
 * owner's repository establishes them; no feature splices another's SQL fragment into its text.
 *
 * EXCEPTIONS lists, with the reason, the files outside repositories that may do one of these.
 * REMAINING lists files not yet moved to repositories: it may only shrink (a listed file that
 * passes fails the check, so the list is kept exact), and is empty when the move is done.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const RULES = [
  { name: 'sql', pattern: /\.query\s*[<(]|createQueryBuilder|\bgetRepository\s*\(/, repositoryOnly: true },
  { name: 'data-source', pattern: /@InjectDataSource|@InjectRepository|\bDataSource\b/, repositoryOnly: true },
  { name: 'entity-manager', pattern: /\bEntityManager\b/, repositoryOnly: true },
  { name: 'hand-made-transaction', pattern: /\.transaction\s*\(/, repositoryOnly: true },
  { name: 'sql-fragment', pattern: /\bsqlReference\s*\(|\bsqlIdentifier\s*\(/, repositoryOnly: false },
  { name: 'tenant-brand', pattern: /\btrust(?:OrganizationId|AppId)\s*\(/, repositoryOnly: true, brand: true },
];

/** Files outside repositories allowed a rule, and why. */
const EXCEPTIONS = {
  // The database infrastructure itself: connections, the unit of work, migrations, the embedded
  // server, LISTEN/NOTIFY, commit settings and change cursors are what repositories stand on.
  'src/database/': ['sql', 'data-source', 'entity-manager', 'hand-made-transaction', 'sql-fragment'],
  // The typed SQL helpers repositories use (queryRows); sqlReference/sqlIdentifier are defined here.
  'src/database/sql.ts': ['sql-fragment'],
  // A session-level advisory lock needs its own connection for the lock's lifetime.
  'src/common/scheduling/advisory-lock.ts': ['sql', 'data-source', 'entity-manager'],
  // The root module wires TypeORM's DataSource; the bootstrap hands it to the session store.
  'src/app.module.ts': ['data-source'],
  'src/app.ts': ['data-source'],
  // The management CLI is an operator's tool: it opens the data source it hands to the services.
  'src/cli/cli-context.ts': ['data-source'],
  // The brands' definition.
  'src/common/access/tenant-id.ts': ['tenant-brand'],
  // The access layer establishes the caller's organization: the access guard for sessions and keys.
  'src/auth/access.guard.ts': ['tenant-brand'],
  'src/auth/device-login/device-login.controller.ts': ['tenant-brand'],
  // The management CLI acts for the operator on the organization named on its command line.
  'src/cli/': ['tenant-brand'],
};

/** Files that still reach the database (or brand ids) outside a repository: only shrinks. */
const REMAINING = JSON.parse(readFileSync(new URL('./sql-owners-remaining.json', import.meta.url), 'utf8'));

const root = new URL('..', import.meta.url).pathname;
const files = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });

const excepted = (path, rule) =>
  Object.entries(EXCEPTIONS).some(([prefix, rules]) => (path === prefix || (prefix.endsWith('/') && path.startsWith(prefix))) && rules.includes(rule));

const violations = new Map();
for (const absolute of files(join(root, 'src'))) {
  const path = relative(root, absolute);
  const isRepository = path.endsWith('.repository.ts');
  const lines = readFileSync(absolute, 'utf8').split('\n');
  lines.forEach((text, index) => {
    const code = text.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '').replace(/\/\*.*?\*\//g, '');
    for (const rule of RULES) {
      if (!rule.pattern.test(code)) continue;
      if (rule.repositoryOnly && isRepository) continue;
      if (rule.name === 'data-source' && /\bimport\b.*\btype\b/.test(code) && !/@Inject/.test(code)) continue;
      if (excepted(path, rule.name)) continue;
      if (!violations.has(path)) violations.set(path, []);
      violations.get(path).push(`${path}:${index + 1} ${rule.name}`);
    }
  });
}

let failed = false;
const listed = new Set(Object.values(REMAINING).flat());
for (const [path, found] of violations) {
  if (listed.has(path)) continue;
  failed = true;
  for (const line of found) console.log(`  error data-access: ${line} (only repositories reach the database: decision 0070)`);
}
for (const path of listed) {
  if (violations.has(path)) continue;
  failed = true;
  console.log(`  error stale-remaining: ${path} passes now: remove it from scripts/sql-owners-remaining.json`);
}
if (process.argv.includes('--list')) for (const path of violations.keys()) console.log(path);
if (failed) process.exit(1);
console.log(`data access: ${listed.size} files still to move into repositories`);
