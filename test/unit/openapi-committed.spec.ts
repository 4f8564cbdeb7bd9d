import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  buildStaticOpenApiDocument,
  COMMITTED_OPENAPI_PATH,
  openApiFileText,
} from '../../src/openapi/static-document.js';

const root = new URL('../..', import.meta.url).pathname;

describe('the committed OpenAPI document (openapi.json)', () => {
  it('is what the application describes today, built without a database (else run `npm run openapi`)', async () => {
    const document = await buildStaticOpenApiDocument();
    expect(document.servers).toEqual([{ url: 'http://localhost:3000' }]);
    expect(Object.keys(document.paths).length).toBeGreaterThan(100);
    const committed = readFileSync(join(root, COMMITTED_OPENAPI_PATH), 'utf8');
    // One comparison of the whole text; on failure, the first operation that differs says where.
    if (committed !== openApiFileText(document)) {
      const parsed = JSON.parse(committed) as typeof document;
      expect(parsed.paths).toEqual(document.paths);
      expect(parsed).toEqual(document);
    }
    expect(committed).toBe(openApiFileText(document));
  }, 60_000);
});
