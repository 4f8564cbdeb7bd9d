// Writes openapi.json, the API's OpenAPI document, from the compiled application's module metadata
// (Nest's preview mode: no database, no network). `npm run openapi` builds first; a unit test
// (test/unit/openapi-committed.spec.ts) fails when the committed file differs from what this writes.
//
//   node scripts/openapi.mjs          write openapi.json
//   node scripts/openapi.mjs --check  exit 1 when openapi.json is stale
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const { buildStaticOpenApiDocument, openApiFileText, COMMITTED_OPENAPI_PATH } = await import(
  join(root, 'dist/src/static-openapi-document.js')
);
const path = join(root, COMMITTED_OPENAPI_PATH);
const text = openApiFileText(await buildStaticOpenApiDocument());
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(path, 'utf8');
  } catch {
    // missing: stale
  }
  if (committed !== text) {
    const [was, is] = [committed.split('\n'), text.split('\n')];
    const line = is.findIndex((content, index) => content !== was[index]);
    console.error(`${COMMITTED_OPENAPI_PATH} is stale from line ${line + 1} (${is[line]?.trim()}): run \`npm run openapi\``);
    process.exit(1);
  }
} else {
  writeFileSync(path, text);
  console.log(`wrote ${COMMITTED_OPENAPI_PATH}`);
}
