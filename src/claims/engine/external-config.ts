import { isIP } from 'node:net';
import { JSONPath } from 'jsonpath-plus';
import { isPublicAddress } from '../../common/ssrf-guard.js';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { AUTHENTICATION_TYPES, HTTP_METHODS, MAX_CLAIM_VALUE_LENGTH } from './claim-types.js';
import type { AuthenticationType, DeviceContext, FieldError } from './claim-types.js';
import { readDeviceVariable } from './device-variables.js';
import type { DeviceScalar } from './device-variables.js';
import { validateExpression } from './expression-language.js';
import { isIntegerInRange, isOneOf, isRecord, isStringMap } from './input-checks.js';

export const DEFAULT_TIMEOUT_SECONDS = 5;
export const MAX_TIMEOUT_SECONDS = 30;
export const MAX_RETRY_COUNT = 5;
export const MAX_CACHE_SECONDS = 86_400;
const MAX_MAP_ENTRIES = 20;
const MAX_URL_LENGTH = 2048;
const MAX_JSON_PATH_LENGTH = 500;

// Headers that frame the connection are the transport's business, not the claim author's.
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const LINE_BREAK = /[\r\n\0]/;
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

export interface ExternalConfigOptions {
  /** Mirrors WEBHOOK_ALLOW_PRIVATE_NETWORKS: admits http:// and private address literals. */
  allowPrivateNetworks: boolean;
}

/** Canonical credential names, each with the spellings accepted in `credentials`. */
const CREDENTIAL_ALIASES = {
  username: ['username'],
  password: ['password'],
  token: ['token'],
  apiKey: ['apiKey', 'api_key', 'key'],
  headerName: ['headerName', 'header_name', 'header'],
  tokenUrl: ['tokenUrl', 'token_url'],
  clientId: ['clientId', 'client_id'],
  clientSecret: ['clientSecret', 'client_secret'],
  scope: ['scope'],
} as const;

export type CredentialName = keyof typeof CREDENTIAL_ALIASES;

const REQUIRED_CREDENTIALS: Readonly<Record<AuthenticationType, readonly CredentialName[]>> = {
  basic: ['username', 'password'],
  bearer: ['token'],
  api_key: ['apiKey'],
  oauth2: ['tokenUrl', 'clientId', 'clientSecret'],
};

export function readCredential(credentials: Record<string, string>, name: CredentialName): string | undefined {
  const alias = CREDENTIAL_ALIASES[name].find(
    (candidate) => Object.hasOwn(credentials, candidate) && credentials[candidate] !== '',
  );
  return alias === undefined ? undefined : credentials[alias];
}

function placeholderValue(name: string, context: DeviceContext, now: number): DeviceScalar | undefined {
  if (name === 'now') return now;
  const dot = name.indexOf('.');
  const namespace = name.slice(0, dot);
  const key = name.slice(dot + 1);
  if (dot > 0 && namespace === 'device') return readDeviceVariable(context, key);
  if (dot > 0 && namespace === 'data' && key !== '') {
    const data = context.additionalData ?? {};
    return Object.hasOwn(data, key) ? data[key] : null;
  }
  return undefined;
}

function placeholderProblems(template: string): string[] {
  const probe: DeviceContext = { keyId: '', riskScore: 0, attestationCount: 0, jailbreakDetected: false };
  return [...template.matchAll(PLACEHOLDER)]
    .filter(([, name]) => placeholderValue(name, probe, 0) === undefined)
    .map(([placeholder]) => `unknown placeholder ${placeholder}; use device.<field>, data.<key> or now`);
}

/**
 * Replaces `{{device.keyId}}`-style placeholders. `escape` adapts each value to where the
 * template is used (JSON string content for bodies); an unset value becomes ''.
 */
export function renderTemplate(
  template: string,
  context: DeviceContext,
  now: number,
  escape: (text: string) => string,
): string {
  return template.replace(PLACEHOLDER, (placeholder, name: string) => {
    const value = placeholderValue(name, context, now);
    if (value === undefined) throw new ClaimEvaluationError(`unknown placeholder ${placeholder}`);
    return escape(value === null ? '' : String(value));
  });
}

export function jsonEscape(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** Checks what can be checked without DNS; the fetcher runs the SSRF guard on every request. */
export function urlProblem(value: unknown, options: ExternalConfigOptions): string | null {
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH) {
    return `must be a URL of at most ${MAX_URL_LENGTH} characters`;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a valid URL';
  }
  const schemes = options.allowPrivateNetworks ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return options.allowPrivateNetworks ? 'must use http or https' : 'must use https';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials; use authentication';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivateNetworks && isIP(host) !== 0 && !isPublicAddress(host)) {
    return 'must not point to a private, loopback or link-local address';
  }
  return null;
}

function checkStringMap(
  input: unknown,
  path: string,
  problems: FieldError[],
  checkEntry: (name: string, value: string) => string | null,
): void {
  if (input === null || input === undefined) return;
  if (!isStringMap(input) || Object.keys(input).length > MAX_MAP_ENTRIES) {
    problems.push({ field: path, message: `must be an object of at most ${MAX_MAP_ENTRIES} string values` });
    return;
  }
  for (const [name, value] of Object.entries(input)) {
    const problem = checkEntry(name, value);
    if (problem) problems.push({ field: `${path}.${name}`, message: problem });
  }
}

function headerProblem(name: string, value: string): string | null {
  if (!HEADER_NAME.test(name)) return 'is not a valid header name';
  if (RESERVED_HEADERS.has(name.toLowerCase())) return 'cannot be set';
  return LINE_BREAK.test(value) ? 'must not contain line breaks' : null;
}

function queryProblem(_name: string, value: string): string | null {
  const problems = placeholderProblems(value);
  return problems.length > 0 ? problems.join('; ') : null;
}

function checkResponseMapping(input: unknown, path: string, problems: FieldError[]): void {
  if (!isRecord(input)) {
    problems.push({ field: path, message: 'must be an object with jsonPath' });
    return;
  }
  const { jsonPath, defaultValue, transformExpression } = input;
  const jsonPathProblem = jsonPathError(jsonPath);
  if (jsonPathProblem) problems.push({ field: `${path}.jsonPath`, message: jsonPathProblem });
  if (
    defaultValue !== null &&
    defaultValue !== undefined &&
    (typeof defaultValue !== 'string' || defaultValue.length > MAX_CLAIM_VALUE_LENGTH)
  ) {
    problems.push({
      field: `${path}.defaultValue`,
      message: `must be a string of at most ${MAX_CLAIM_VALUE_LENGTH} characters`,
    });
  }
  if (transformExpression !== null && transformExpression !== undefined) {
    const errors =
      typeof transformExpression === 'string'
        ? validateExpression(transformExpression, { allowValue: true })
        : ['must be a string'];
    for (const message of errors) problems.push({ field: `${path}.transformExpression`, message });
  }
}

function jsonPathError(jsonPath: unknown): string | null {
  if (typeof jsonPath !== 'string' || !jsonPath.startsWith('$') || jsonPath.length > MAX_JSON_PATH_LENGTH) {
    return `must be a JSONPath starting with $ of at most ${MAX_JSON_PATH_LENGTH} characters`;
  }
  // Script and filter expressions would need eval, which stays disabled.
  if (jsonPath.includes('(')) return 'script and filter expressions are not supported';
  try {
    JSONPath({ path: jsonPath, json: {}, eval: false, wrap: true });
  } catch (error) {
    return `is not a valid JSONPath: ${(error as Error).message}`;
  }
  return null;
}

function checkAuthentication(
  input: unknown,
  options: ExternalConfigOptions,
  path: string,
  problems: FieldError[],
): void {
  if (input === null || input === undefined) return;
  if (!isRecord(input) || !isOneOf(AUTHENTICATION_TYPES, input.type)) {
    problems.push({ field: `${path}.type`, message: `must be one of ${AUTHENTICATION_TYPES.join(', ')}` });
    return;
  }
  const credentials = input.credentials;
  if (!isStringMap(credentials)) {
    problems.push({ field: `${path}.credentials`, message: 'must be an object of string values' });
    return;
  }
  for (const name of REQUIRED_CREDENTIALS[input.type]) {
    if (readCredential(credentials, name) === undefined) {
      problems.push({ field: `${path}.credentials.${name}`, message: 'is required' });
    }
  }
  for (const [name, value] of Object.entries(credentials)) {
    if (LINE_BREAK.test(value)) {
      problems.push({ field: `${path}.credentials.${name}`, message: 'must not contain line breaks' });
    }
  }
  const headerName = readCredential(credentials, 'headerName');
  if (input.type === 'api_key' && headerName !== undefined) {
    const problem = headerProblem(headerName, '');
    if (problem) problems.push({ field: `${path}.credentials.headerName`, message: problem });
  }
  const tokenUrl = readCredential(credentials, 'tokenUrl');
  if (input.type === 'oauth2' && tokenUrl !== undefined) {
    const problem = urlProblem(tokenUrl, options);
    if (problem) problems.push({ field: `${path}.credentials.tokenUrl`, message: problem });
  }
}

function checkIntegers(input: Record<string, unknown>, path: string, problems: FieldError[]): void {
  const limits = [
    ['cacheSeconds', 0, MAX_CACHE_SECONDS],
    ['timeoutSeconds', 1, MAX_TIMEOUT_SECONDS],
    ['retryCount', 0, MAX_RETRY_COUNT],
  ] as const;
  for (const [name, min, max] of limits) {
    const value = input[name];
    if (value !== null && value !== undefined && !isIntegerInRange(value, min, max)) {
      problems.push({ field: `${path}.${name}`, message: `must be an integer from ${min} to ${max}` });
    }
  }
}

function checkBodyTemplate(template: unknown, method: unknown, path: string, problems: FieldError[]): void {
  if (template === null || template === undefined) return;
  if (typeof template !== 'string' || template.length > MAX_CLAIM_VALUE_LENGTH) {
    problems.push({ field: path, message: `must be a string of at most ${MAX_CLAIM_VALUE_LENGTH} characters` });
  } else if (method === 'GET') {
    problems.push({ field: path, message: 'is not allowed with GET' });
  } else {
    for (const message of placeholderProblems(template)) problems.push({ field: path, message });
  }
}

/** Appends the problems of an `externalConfig` object, named from `path`. */
export function checkExternalConfig(
  input: unknown,
  options: ExternalConfigOptions,
  path: string,
  problems: FieldError[],
): void {
  if (!isRecord(input)) {
    problems.push({ field: path, message: 'must be an object' });
    return;
  }
  const endpointProblem = urlProblem(input.endpoint, options);
  if (endpointProblem) problems.push({ field: `${path}.endpoint`, message: endpointProblem });
  if (!isOneOf(HTTP_METHODS, input.method)) {
    problems.push({ field: `${path}.method`, message: `must be one of ${HTTP_METHODS.join(', ')}` });
  }
  checkStringMap(input.headers, `${path}.headers`, problems, headerProblem);
  checkStringMap(input.queryParameters, `${path}.queryParameters`, problems, queryProblem);
  checkBodyTemplate(input.bodyTemplate, input.method, `${path}.bodyTemplate`, problems);
  checkResponseMapping(input.responseMapping, `${path}.responseMapping`, problems);
  checkIntegers(input, path, problems);
  checkAuthentication(input.authentication, options, `${path}.authentication`, problems);
}

/** Field errors for an `externalConfig` object, named `externalConfig.<path>`. */
export function validateExternalConfig(input: unknown, options: ExternalConfigOptions): FieldError[] {
  const problems: FieldError[] = [];
  checkExternalConfig(input, options, 'externalConfig', problems);
  return problems;
}
