'use strict';
const { createHash } = require('node:crypto'); // eslint-disable-line @typescript-eslint/no-require-imports
/**
 * Jest's CommonJS runtime cannot `require()` an ES module, while Node 20.19 and later can. The
 * CommonJS build of @nestjs/throttler requires the ESM-only @nestjs/common and @nestjs/core, so
 * under Jest those two requires are answered with the very module instances the test imported
 * (published by throttler.mjs, which the tests import in place of the package), exactly what Node's own require(esm) returns in production.
 */
const BRIDGED = /require\("(@nestjs\/(?:common|core))"\)/g;

module.exports = {
  process(source) {
    return { code: source.replace(BRIDGED, 'globalThis[Symbol.for("attestly.jest.esm")]["$1"]') };
  },
  getCacheKey(source, path) {
    return `esm-require-bridge-1:${path}:${source.length}:${createHash('sha1').update(source).digest('hex')}`;
  },
};
