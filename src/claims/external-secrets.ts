import type { ExternalConfig, FieldError } from './engine/index.js';

/**
 * Responses never show the secrets of an external claim (any member may read claims). An
 * update may send this placeholder back to keep a stored secret unchanged.
 */
export const REDACTED = '********';

const SECRET_CREDENTIALS = new Set(['password', 'token', 'apiKey', 'api_key', 'key', 'clientSecret', 'client_secret']);
const SECRET_HEADER = /authorization|cookie|api[-_]?key|token|secret|password/i;
const noStoredValue = `is the ${REDACTED} placeholder, but there is no stored value to keep; send the secret`;

function redactMap(map: Record<string, string>, isSecret: (name: string) => boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(map).map(([name, value]) => [name, isSecret(name) ? REDACTED : value]));
}

export function redactExternalConfig(config: ExternalConfig): ExternalConfig {
  return {
    ...config,
    headers: config.headers ? redactMap(config.headers, (name) => SECRET_HEADER.test(name)) : config.headers,
    authentication: config.authentication
      ? {
          type: config.authentication.type,
          credentials: redactMap(config.authentication.credentials, (name) => SECRET_CREDENTIALS.has(name)),
        }
      : config.authentication,
  };
}

function isStringMap(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === 'string')
  );
}

function findHeader(headers: Record<string, string> | null | undefined, name: string): string | undefined {
  const match = Object.keys(headers ?? {}).find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  return match === undefined ? undefined : headers![match];
}

/**
 * Puts the stored secrets back where an incoming config carries the placeholder. A placeholder
 * with nothing stored behind it is a problem: it would otherwise be sent as the secret itself.
 * The input is left unchanged; shapes are checked later by the engine.
 */
export function restoreRedactedSecrets(
  input: unknown,
  previous: ExternalConfig | null,
  problems: FieldError[],
): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const config = { ...(input as Record<string, unknown>) };
  if (isStringMap(config.headers)) {
    config.headers = Object.fromEntries(
      Object.entries(config.headers).map(([name, value]) => {
        if (value !== REDACTED) return [name, value];
        const stored = findHeader(previous?.headers, name);
        if (stored === undefined) problems.push({ field: `externalConfig.headers.${name}`, message: noStoredValue });
        return [name, stored ?? value];
      }),
    );
  }
  const authentication = config.authentication as { type?: unknown; credentials?: unknown } | null | undefined;
  if (authentication && typeof authentication === 'object' && isStringMap(authentication.credentials)) {
    const storedAuth =
      previous?.authentication && previous.authentication.type === authentication.type ? previous.authentication : null;
    const credentials = Object.fromEntries(
      Object.entries(authentication.credentials).map(([name, value]) => {
        if (value !== REDACTED) return [name, value];
        const stored =
          storedAuth && Object.hasOwn(storedAuth.credentials, name) ? storedAuth.credentials[name] : undefined;
        if (stored === undefined) {
          problems.push({ field: `externalConfig.authentication.credentials.${name}`, message: noStoredValue });
        }
        return [name, stored ?? value];
      }),
    );
    config.authentication = { ...authentication, credentials };
  }
  return config;
}
