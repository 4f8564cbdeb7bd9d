#!/usr/bin/env node
/**
 * The boundaries check of `npm run lint`: dependency-cruiser with the rules of
 * .dependency-cruiser.cjs, then the feature-cycle check on the import graph collapsed to the
 * top-level folders of src/ (a cycle between two features fails however deep in either the
 * imports sit), then the table check: no feature names a table another feature owns
 * (scripts/table-owners.mjs, scripts/table-ownership.mjs). Exits non-zero on any violation.
 */
import { readFileSync } from 'node:fs';
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { NOT_FEATURES, REMAINING, TABLE_OWNERS } from './table-owners.mjs';
import { checkTableOwnership, migratedTables, sourceFiles } from './table-ownership.mjs';

const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
const tsConfig = extractTSConfig('tsconfig.json');
const { output } = await cruise(['src'], { ...options, outputType: 'json' }, {}, { tsConfig });
const result = typeof output === 'string' ? JSON.parse(output) : output;

let failed = false;
if (result.summary.error > 0 || result.summary.warn > 0) {
  failed = true;
  process.stdout.write((await format(result, { outputType: 'err' })).output);
}

const cycles = featureCycles(result.modules);
for (const cycle of cycles) {
  failed = true;
  console.log(`  error feature-cycle: ${cycle.folders.join(' → ')} → ${cycle.folders[0]}`);
  for (const edge of cycle.edges) console.log(`      ${edge}`);
}

const read = (paths) => paths.map((path) => [path, readFileSync(path, 'utf8')]);
const migrated = migratedTables(read(sourceFiles('migrations')));
for (const table of [...migrated].filter((name) => !(name in TABLE_OWNERS))) {
  failed = true;
  console.log(`  error table-without-owner: ${table} (created by a migration, missing in scripts/table-owners.mjs)`);
}
for (const table of Object.keys(TABLE_OWNERS).filter((name) => !migrated.has(name))) {
  failed = true;
  console.log(`  error owner-of-no-table: ${table} (in scripts/table-owners.mjs, created by no migration)`);
}
const tables = checkTableOwnership({
  owners: TABLE_OWNERS,
  notFeatures: NOT_FEATURES,
  remaining: REMAINING,
  sources: read(sourceFiles('src')),
});
for (const { path, line, table, owner, feature } of tables.violations) {
  failed = true;
  console.log(
    `  error foreign-table: ${path}:${line} (${feature}) names ${table}, owned by ${owner}: go through ${owner}'s service or repository`,
  );
}
for (const { path, table } of tables.stale) {
  failed = true;
  console.log(
    `  error stale-remaining: ${path} no longer names ${table}: remove it from REMAINING in scripts/table-owners.mjs`,
  );
}

if (failed) {
  console.log(`\nBoundaries: violations found (rules: .dependency-cruiser.cjs, scripts/table-owners.mjs).`);
  process.exit(1);
}
console.log(
  `Boundaries: no violation (${result.summary.totalCruised} modules, ${result.summary.totalDependenciesCruised} dependencies; ` +
    `${Object.keys(TABLE_OWNERS).length} tables, ${tables.allowed.length} cross-feature queries still listed in REMAINING).`,
);

/** Cycles between top-level folders of src/, each with one file-level import per step. */
function featureCycles(modules) {
  const folderOf = (path) => /^src\/([^/]+)\//.exec(path)?.[1] ?? null;
  const graph = new Map();
  const example = new Map();
  for (const module of modules) {
    const from = folderOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (!to || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from).add(to);
      if (!example.has(`${from}>${to}`)) example.set(`${from}>${to}`, `${module.source} → ${dependency.resolved}`);
    }
  }
  const found = [];
  for (const component of stronglyConnected(graph)) {
    if (component.length < 2) continue;
    const folders = cycleThrough(graph, new Set(component), component[0]);
    const edges = folders.map((from, i) => example.get(`${from}>${folders[(i + 1) % folders.length]}`));
    found.push({ folders, edges });
  }
  return found;
}

/** Tarjan's strongly connected components. */
function stronglyConnected(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  let next = 0;
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node), low.get(target)));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node), index.get(target)));
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components;
}

/** A shortest cycle from `start` back to itself inside one component (breadth-first). */
function cycleThrough(graph, members, start) {
  const previous = new Map();
  const queue = [start];
  while (queue.length) {
    const node = queue.shift();
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]));
        return path;
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}
