// @nestjs/throttler as the tests import it (jest.config.mjs maps the package name here): its
// CommonJS build requires the ESM-only @nestjs/common and @nestjs/core, which Jest's CommonJS
// runtime cannot require. This module imports those two first, publishes the instances for
// esm-require-bridge.cjs, and only then loads the package's own build, so the throttler that runs
// in the tests is the package's, bound to the very Nest modules the test file uses.
// Only test files whose module graph reaches the throttler pay for loading Nest here.
import * as common from '@nestjs/common';
import * as core from '@nestjs/core';
import * as self from './throttler.mjs';

globalThis[Symbol.for('attestly.jest.esm')] = { '@nestjs/common': common, '@nestjs/core': core };

const throttler = await import('@nestjs/throttler/dist/index.js');

export const {
  getOptionsToken,
  getStorageToken,
  DEFAULT_IPV6_SUBNET_PREFIX,
  normalizeIp,
  ThrottlerStorage,
  Throttle,
  SkipThrottle,
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  throttlerMessage,
  ThrottlerException,
  ThrottlerGuard,
  ThrottlerModule,
  DEFAULT_SWEEP_INTERVAL,
  ThrottlerStorageService,
  seconds,
  minutes,
  hours,
  days,
  weeks,
} = throttler;
export default throttler.default ?? throttler;

// A new release that exports more (or fewer) names fails here rather than hand a test `undefined`.
const listed = new Set(Reflect.ownKeys(self));
const actual = Object.keys(throttler).filter((name) => !['default', '__esModule', 'module.exports'].includes(name));
const missing = actual.filter((name) => !listed.has(name));
if (missing.length)
  throw new Error(`test/harness/throttler.mjs: add the throttler's new exports ${missing.join(', ')}`);
