import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Below this share of operations answered with a success, a whole e2e run fails (79% measured: 146 of 184). */
const MIN_COVERAGE = 0.7;

export default async function globalTeardown(globalConfig) {
  const coverage = openApiCoverage(globalConfig);
  // The run's databases, its embedded server and the server's directory (see global-setup.mjs).
  await globalThis.__removeTestDatabases?.();
  if (coverage) throw new Error(coverage);
}

/**
 * Sums up the test apps' checks of their answers against the OpenAPI document (each file fails on
 * its own mismatches): how many operations the run exercised. A run of the whole e2e suite must
 * answer most operations with a success, so the check covers the document and not a corner of it.
 */
function openApiCoverage(globalConfig) {
  const directory = process.env.OPENAPI_CHECK_DIR;
  if (!directory) return null;
  const checks = readdirSync(directory).map((name) => JSON.parse(readFileSync(join(directory, name), 'utf8')));
  rmSync(directory, { recursive: true, force: true });
  if (!checks.length) return null;
  const exercised = new Set(checks.flatMap((check) => check.exercised));
  const succeeded = new Set(checks.flatMap((check) => check.succeeded));
  const operations = Math.max(...checks.map((check) => check.operations));
  const responses = checks.reduce((sum, check) => sum + check.responses, 0);
  const problems = checks.reduce((sum, check) => sum + check.problems.length, 0);
  console.log(
    `OpenAPI: ${responses} JSON answers checked against the document: ${succeeded.size} of ${operations} ` +
      `operations answered with a success, ${exercised.size} exercised at all; ${problems} mismatches.`,
  );
  const wholeSuite =
    !globalConfig?.testPathPattern && !globalConfig?.testPathPatterns?.length && !globalConfig?.testNamePattern;
  if (wholeSuite && succeeded.size < MIN_COVERAGE * operations) {
    return `OpenAPI: the e2e suite answered only ${succeeded.size} of ${operations} operations with a success (at least ${Math.ceil(MIN_COVERAGE * operations)} expected)`;
  }
  return null;
}
