/**
 * The table check of `npm run lint`: no feature names a table another feature owns
 * (scripts/table-owners.mjs). It reads every production source file under src/ with the TypeScript
 * parser and finds the tables each one names:
 *   - in SQL: a known table after FROM, JOIN, UPDATE, INTO, TABLE or USING (upper case, as all SQL
 *     here is written) in a string or template literal;
 *   - in TypeORM: a table name or an entity class given to a query builder or entity manager call
 *     (`.from('organizations', 'o')`, `manager.findOneBy(Organization, …)`, `getRepository(App)`,
 *     `@InjectRepository(App)`, `TypeOrmModule.forFeature([App])`).
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const SQL_TABLE = /\b(?:FROM|JOIN|UPDATE|INTO|TABLE|USING)\s+(?:ONLY\s+)?"?([a-z_][a-z0-9_]*)"?/g;

/** Production TypeScript files under `root`, as paths relative to `cwd` with forward slashes. */
export function sourceFiles(root, cwd = process.cwd()) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts'))
        files.push(relative(cwd, path).split('\\').join('/'));
    }
  };
  walk(root);
  return files.sort();
}

/** Entity class name → table, from the `@Entity('table')` decorators of the given sources. */
export function entityTables(sources) {
  const tables = new Map();
  for (const [path, text] of sources) {
    const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (ts.isClassDeclaration(node) && node.name) {
        for (const decorator of ts.getDecorators(node) ?? []) {
          const call = decorator.expression;
          if (ts.isCallExpression(call) && call.expression.getText(file) === 'Entity') {
            const [argument] = call.arguments;
            if (argument && ts.isStringLiteralLike(argument)) tables.set(node.name.text, argument.text);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return tables;
}

/** The known tables one file names, each with the line it is first named on. */
export function tablesNamed(path, text, knownTables, entities) {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found = new Map();
  const note = (table, node) => {
    if (knownTables.has(table) && !found.has(table))
      found.set(table, file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1);
  };
  const sql = (literal, node) => {
    for (const match of literal.matchAll(SQL_TABLE)) note(match[1], node);
  };
  const visit = (node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) sql(node.text, node);
    else if (ts.isTemplateExpression(node))
      sql([node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' $0 '), node);
    else if (ts.isCallExpression(node)) {
      for (const argument of node.arguments) {
        const candidates = ts.isArrayLiteralExpression(argument) ? argument.elements : [argument];
        for (const candidate of candidates) {
          if (ts.isIdentifier(candidate) && entities.has(candidate.text)) note(entities.get(candidate.text), candidate);
        }
      }
      const callee = node.expression;
      const [first] = node.arguments;
      if (
        ts.isPropertyAccessExpression(callee) &&
        /^(from|into|update|delete|insert|(inner|left)Join(AndSelect|AndMap(One|Many))?|getRepository|createQueryBuilder)$/.test(
          callee.name.text,
        ) &&
        first &&
        ts.isStringLiteralLike(first)
      )
        note(first.text, first);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The top-level folder of src/ a file belongs to, or null for files directly under src/. */
export function featureOf(path) {
  return /^src\/([^/]+)\//.exec(path)?.[1] ?? null;
}

/**
 * Every place a feature names a table another feature owns, and every entry of `remaining` that no
 * longer matches one. `owners` maps table → feature; `sources` is a list of [path, text].
 */
export function checkTableOwnership({ owners, notFeatures, remaining, sources }) {
  const knownTables = new Set(Object.keys(owners));
  const entities = entityTables(sources);
  const violations = [];
  const allowed = [];
  const seen = new Set();
  for (const [path, text] of sources) {
    const feature = featureOf(path);
    if (feature === null || notFeatures.includes(feature)) continue;
    for (const [table, line] of tablesNamed(path, text, knownTables, entities)) {
      if (owners[table] === feature) continue;
      const listed = remaining[path]?.includes(table) ?? false;
      const finding = { path, line, table, owner: owners[table], feature };
      if (listed) {
        seen.add(`${path}:${table}`);
        allowed.push(finding);
      } else violations.push(finding);
    }
  }
  const stale = Object.entries(remaining).flatMap(([path, tables]) =>
    tables.filter((table) => !seen.has(`${path}:${table}`)).map((table) => ({ path, table })),
  );
  return { violations, allowed, stale };
}

/** Tables the migrations create, from their CREATE TABLE statements. */
export function migratedTables(migrationSources) {
  const tables = new Set();
  for (const [, text] of migrationSources)
    for (const match of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?([a-z_][a-z0-9_]*)"?/g)) tables.add(match[1]);
  return tables;
}
