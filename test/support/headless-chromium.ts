// Debian's Chromium driven by playwright-core (never a downloaded browser), for the tests that
// need a real browser. Where either is missing the suite is skipped, saying why; `.ci/run`
// installs both.
import { existsSync } from 'node:fs';
import { describe } from '@jest/globals';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The little of playwright-core the browser tests use, typed here so the suites compile without it. */
export interface Page {
  setDefaultTimeout(timeout: number): void;
  goto(url: string): Promise<unknown>;
  fill(selector: string, value: string): Promise<void>;
  click(selector: string): Promise<void>;
  waitForSelector(selector: string): Promise<unknown>;
  waitForURL(url: string | RegExp): Promise<void>;
  textContent(selector: string): Promise<string | null>;
  url(): string;
  evaluate(expression: string): Promise<unknown>;
  on(event: 'console', listener: (message: { type(): string; text(): string }) => void): void;
}
export interface Browser {
  newPage(): Promise<Page>;
  close(): Promise<void>;
}
interface Playwright {
  chromium: { launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<Browser> };
}

async function loadPlaywright(): Promise<Playwright | null> {
  const name = 'playwright-core';
  try {
    return (await import(name)) as Playwright;
  } catch {
    return null;
  }
}

const playwright = await loadPlaywright();
const skipReason = !playwright
  ? 'playwright-core is not installed (npm ci installs it once it is a devDependency)'
  : !existsSync(CHROMIUM)
    ? `${CHROMIUM} is absent (apt-get install -y chromium, or set CHROMIUM_PATH)`
    : null;

/** `describe`, or `describe.skip` with the reason on stderr when there is no browser to drive. */
export function browserSuite(name: string): typeof describe | typeof describe.skip {
  if (!skipReason) return describe;
  process.stderr.write(`${name} skipped: ${skipReason}\n`);
  return describe.skip;
}

export function launchChromium(): Promise<Browser> {
  // Root in CI containers cannot use Chromium's sandbox.
  return playwright!.chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}

/** A page that fails a step within 10 s, well inside the test's own timeout, naming the step. */
export async function newPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage();
  page.setDefaultTimeout(10_000);
  return page;
}
