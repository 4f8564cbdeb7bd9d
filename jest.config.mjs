import { readFileSync } from 'node:fs';

// Jest runs the TypeScript sources as ES modules (every @nestjs/* 12 package is ESM-only), transpiled
// file by file by SWC with the build's own options (.swcrc: legacy decorators and their metadata for
// Nest's dependency injection); no type checking here: `npm run typecheck`, in `npm run lint`, does it.
const swcrc = JSON.parse(
  readFileSync(new URL('.swcrc', import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n'),
);
const swc = { ...swcrc, swcrc: false, sourceMaps: 'inline' };

const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // @nestjs/throttler is CommonJS that requires ES modules: see test/harness/throttler.mjs.
    '^@nestjs/throttler$': '<rootDir>/test/harness/throttler.mjs',
  },
  transform: {
    '^.+\\.ts$': ['@swc/jest', swc],
    '/node_modules/@nestjs/throttler/.+\\.js$': '<rootDir>/test/harness/esm-require-bridge.cjs',
  },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/throttler/)'],
  // The Reflect metadata API decorators (class-transformer's, Nest's) write to, as production's entry
  // point loads it (src/app.ts) before any decorated class.
  setupFiles: ['reflect-metadata'],
};

export default {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/test/unit/**/*.spec.ts',
        '<rootDir>/packages/*/test/**/*.spec.ts',
      ],
    },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.mjs',
      globalTeardown: '<rootDir>/test/harness/global-teardown.mjs',
    },
  ],
  maxWorkers: 2,
  testTimeout: 30000,
};
