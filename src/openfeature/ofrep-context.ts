import { askingDevice } from '../common/access/asking-device.js';
import { ENVIRONMENTS, isEnvironment, type Environment, type EvaluationContext } from '../flags/index.js';

/**
 * An OFREP request's `context`, turned into the evaluation context of the flags kernel: what
 * GET /api/v1/flags builds from a device's token and headers, built here from the device token
 * (or, for a server, from the request alone) plus the context's attributes. Pure: no framework.
 */

/** The error codes of OFREP that a request can earn before any flag is looked at. */
export type OfrepRequestErrorCode = 'PARSE_ERROR' | 'INVALID_CONTEXT' | 'TARGETING_KEY_MISSING';

export interface OfrepRequestError {
  readonly errorCode: OfrepRequestErrorCode;
  readonly errorDetails: string;
}

/** Who asks: a device with its verified token (client side), or a server with a `flags:read` key. */
export type OfrepCaller =
  | { readonly kind: 'device'; readonly deviceId: string; readonly riskScore: number | null }
  | { readonly kind: 'server' };

export interface OfrepEvaluationRequest {
  readonly environment: Environment;
  readonly context: EvaluationContext;
  /** Whose overrides apply and whose rollout bucket counts: the token's device, or the targetingKey. */
  readonly deviceKeyId: string;
  /**
   * Who asks: a device is told the reason and variant of each value but not the targeting behind it
   * (rule names and ids, rollout percentages), which GET /api/v1/flags never shows it either.
   */
  readonly caller: OfrepCaller['kind'];
}

/** At most this many attributes in a context (targetingKey and environment included). */
export const MAX_CONTEXT_ATTRIBUTES = 50;
/** Longest attribute name. */
export const MAX_ATTRIBUTE_NAME_LENGTH = 100;
/** Longest value of an attribute a rule reads as `custom.<name>`. */
export const MAX_CUSTOM_VALUE_LENGTH = 1000;

/** The attributes the kernel reads by name, with their longest value (as POST /flags/{id}/evaluate takes them). */
const KNOWN_STRINGS = {
  deviceModel: 100,
  osVersion: 50,
  appVersion: 50,
  locale: 35,
  country: 10,
  userId: 200,
} as const satisfies Partial<Record<keyof EvaluationContext, number>>;
type KnownString = keyof typeof KNOWN_STRINGS;

const MAX_TARGETING_KEY_LENGTH = 200;

/** Names the service sets itself; a context that sends them is refused rather than silently overruled. */
const SERVICE_SET: Readonly<Record<string, string>> = {
  attestationStatus: 'attestationStatus is set by the service (verified for a device token, server for an API key)',
  deviceId: 'the device id is the targetingKey (or, with a device token, the token itself)',
};

const invalid = (errorDetails: string): OfrepRequestError => ({ errorCode: 'INVALID_CONTEXT', errorDetails });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads `{ "context": { ... } }`. A missing context is an empty one (a provider without context
 * sends `{}`). Known attributes feed the kernel's attributes of the same name; every other
 * attribute is readable by rules as `custom.<name>`, its value as text (numbers and booleans
 * written as JSON writes them). `environment` picks the flag environment (production by default).
 */
export function parseOfrepRequest(body: unknown, caller: OfrepCaller): OfrepEvaluationRequest | OfrepRequestError {
  if (!isPlainObject(body)) {
    return {
      errorCode: 'PARSE_ERROR',
      errorDetails: 'The request body must be a JSON object: {"context": {"targetingKey": "..."}}',
    };
  }
  const raw = body.context ?? {};
  if (!isPlainObject(raw)) {
    return { errorCode: 'PARSE_ERROR', errorDetails: 'context must be a JSON object' };
  }
  const names = Object.keys(raw);
  if (names.length > MAX_CONTEXT_ATTRIBUTES) {
    return invalid(`context has ${names.length} attributes; at most ${MAX_CONTEXT_ATTRIBUTES} are accepted`);
  }

  let environment: Environment = 'production';
  let targetingKey: string | null = null;
  let riskScore: number | null = caller.kind === 'device' ? caller.riskScore : null;
  const known: { -readonly [name in KnownString]?: string } = {};
  const custom: Record<string, string> = Object.create(null) as Record<string, string>;

  for (const name of names) {
    const value = raw[name];
    if (name.length === 0 || name.length > MAX_ATTRIBUTE_NAME_LENGTH) {
      return invalid(`context attribute names must be 1 to ${MAX_ATTRIBUTE_NAME_LENGTH} characters long`);
    }
    // An attribute sent as null is an attribute not sent (OpenFeature contexts may hold nulls).
    if (value === null || value === undefined) continue;
    if (Object.hasOwn(SERVICE_SET, name)) return invalid(`context.${name} cannot be sent: ${SERVICE_SET[name]}`);
    switch (name) {
      case 'targetingKey':
        if (typeof value !== 'string' || value.length > MAX_TARGETING_KEY_LENGTH) {
          return invalid(`context.targetingKey must be a string of at most ${MAX_TARGETING_KEY_LENGTH} characters`);
        }
        targetingKey = value;
        continue;
      case 'environment':
        if (typeof value !== 'string' || !isEnvironment(value)) {
          return invalid(`context.environment must be one of: ${ENVIRONMENTS.join(', ')}`);
        }
        environment = value;
        continue;
      case 'riskScore':
        if (caller.kind === 'device') {
          return invalid('context.riskScore cannot be sent with a device token: the token carries the risk score');
        }
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 100) {
          return invalid('context.riskScore must be a whole number from 0 to 100');
        }
        riskScore = value;
        continue;
    }
    if (Object.hasOwn(KNOWN_STRINGS, name)) {
      const limit = KNOWN_STRINGS[name as KnownString];
      if (typeof value !== 'string' || value.length > limit) {
        return invalid(`context.${name} must be a string of at most ${limit} characters`);
      }
      known[name as KnownString] = value;
      continue;
    }
    const text = attributeText(value);
    if (text === null) {
      return invalid(
        `context.${name} must be a string, number or boolean: rules read flat attributes (custom.${name}), not nested objects or lists`,
      );
    }
    if (text.length > MAX_CUSTOM_VALUE_LENGTH) {
      return invalid(`context.${name} must be at most ${MAX_CUSTOM_VALUE_LENGTH} characters`);
    }
    custom[name] = text;
  }

  // The one rule of which device asks (decision 0074): a device token names its device, and
  // targetingKey may only repeat it; a server's targetingKey is the device.
  const asking = askingDevice(caller.kind === 'device' ? caller.deviceId : null, targetingKey);
  if (!asking.admitted) {
    return invalid(
      "context.targetingKey must be left out or equal the device token's subject: the token says which device asks (send a user's id as userId)",
    );
  }
  const deviceId = asking.deviceId;
  if (!deviceId) {
    return {
      errorCode: 'TARGETING_KEY_MISSING',
      errorDetails: 'context.targetingKey is required with an API key: the device id that rollouts bucket on',
    };
  }

  return {
    environment,
    deviceKeyId: deviceId,
    caller: caller.kind,
    context: {
      deviceId,
      deviceModel: known.deviceModel ?? null,
      osVersion: known.osVersion ?? null,
      appVersion: known.appVersion ?? null,
      locale: known.locale ?? null,
      country: known.country ?? null,
      userId: known.userId ?? null,
      riskScore,
      attestationStatus: caller.kind === 'device' ? 'verified' : 'server',
      custom: Object.keys(custom).length ? custom : null,
    },
  };
}

export function isRequestError(parsed: OfrepEvaluationRequest | OfrepRequestError): parsed is OfrepRequestError {
  return 'errorCode' in parsed;
}

function attributeText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  if (typeof value === 'boolean') return String(value);
  return null;
}
