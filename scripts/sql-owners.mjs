/**
 * The data-access rules of decision 0070 as a pure check (scripts/check-sql-owners.mjs runs it on
 * src/ in `npm run lint`; test/unit/sql-owners.spec.ts tries each rule).
 */
export const RULES = [
  { name: 'sql', pattern: /\.query\s*[<(]|createQueryBuilder|\bgetRepository\s*\(/, repositoryOnly: true },
  { name: 'data-source', pattern: /@InjectDataSource|@InjectRepository|\bDataSource\b/, repositoryOnly: true },
  { name: 'entity-manager', pattern: /\bEntityManager\b/, repositoryOnly: true },
  { name: 'hand-made-transaction', pattern: /\.transaction\s*\(/, repositoryOnly: true },
  { name: 'sql-fragment', pattern: /\bsqlReference\s*\(|\bsqlIdentifier\s*\(/, repositoryOnly: false },
  { name: 'tenant-brand', pattern: /\btrust(?:OrganizationId|AppId)\s*\(/, repositoryOnly: true, brand: true },
];

/**
 * Files outside repositories allowed a rule, and why: `'rule'` allows it anywhere in the file,
 * `'rule:N'` at most N times (a file that establishes a tenant at one call must not grow others).
 */
export const EXCEPTIONS = {
  // The database infrastructure itself: connections, the unit of work, migrations, the embedded
  // server, LISTEN/NOTIFY, commit settings and change cursors are what repositories stand on.
  'src/database/': ['sql', 'data-source', 'entity-manager', 'hand-made-transaction', 'sql-fragment'],
  // The typed SQL helpers repositories use (queryRows); sqlReference/sqlIdentifier are defined here.
  'src/database/sql.ts': ['sql-fragment'],
  // A session-level advisory lock needs its own connection for the lock's lifetime.
  'src/database/advisory-lock.ts': ['sql', 'data-source', 'entity-manager'],
  // The root module wires TypeORM's DataSource.
  // The root module wires TypeORM's DataSource; the bootstrap hands it to the session store.
  'src/app.module.ts': ['data-source'],
  'src/app.ts': ['data-source'],
  // The management CLI is an operator's tool: it opens the data source it hands to the services.
  'src/cli/cli-context.ts': ['data-source'],
  // The brands' definition.
  'src/common/access/tenant-id.ts': ['tenant-brand'],
  // The access layer establishes the caller's organization: the session resolver for a signed-in
  // session (its row and membership confirm it), the access guard for keys.
  'src/auth/session-resolver.ts': ['tenant-brand:1'],
  'src/auth/access.guard.ts': ['tenant-brand:1'],
  // A Stripe event whose signature verified names the organization our checkout wrote into it.
  'src/billing/stripe-webhook.service.ts': ['tenant-brand:1'],
  // The management CLI acts for the operator on the organization named on its command line.
  'src/cli/': ['tenant-brand'],
};

/** How many times `path` may break `rule`: 0, a listed count, or Infinity. */
const allowance = (exceptions, path, rule) => {
  let allowed = 0;
  for (const [prefix, rules] of Object.entries(exceptions)) {
    if (path !== prefix && !(prefix.endsWith('/') && path.startsWith(prefix))) continue;
    for (const entry of rules) {
      const [name, count] = entry.split(':');
      if (name === rule) allowed = Math.max(allowed, count === undefined ? Infinity : Number(count));
    }
  }
  return allowed;
};

/**
 * `sources` ([path, text] of every non-test file under src/) against the rules: the violations by
 * file (each as `path:line rule`), the files of `remaining` that still violate and those that pass
 * now (`stale`: the list only shrinks).
 */
export function checkDataAccess({ sources, remaining, exceptions = EXCEPTIONS }) {
  const violations = new Map();
  for (const [path, text] of sources) {
    const isRepository = path.endsWith('.repository.ts');
    const used = new Map();
    text.split('\n').forEach((line, index) => {
      const code = line
        .replace(/\/\/.*$/, '')
        .replace(/^\s*\*.*$/, '')
        .replace(/\/\*.*?\*\//g, '');
      for (const rule of RULES) {
        if (!rule.pattern.test(code)) continue;
        if (rule.repositoryOnly && isRepository) continue;
        if (rule.name === 'data-source' && /\bimport\b.*\btype\b/.test(code) && !/@Inject/.test(code)) continue;
        used.set(rule.name, (used.get(rule.name) ?? 0) + 1);
        if (used.get(rule.name) <= allowance(exceptions, path, rule.name)) continue;
        if (!violations.has(path)) violations.set(path, []);
        violations.get(path).push(`${path}:${index + 1} ${rule.name}`);
      }
    });
  }
  const listed = new Set(Object.values(remaining).flat());
  return {
    violations: [...violations].filter(([path]) => !listed.has(path)),
    remaining: [...listed].filter((path) => violations.has(path)),
    stale: [...listed].filter((path) => !violations.has(path)),
  };
}
