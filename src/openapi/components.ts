import { SDK_KEY_SCOPE, type AccessRule } from '../common/access/access.decorator.js';
import { SESSION_COOKIE } from '../common/http/session-cookie.js';
import type { OpenApiDocument, ResponseObject, SchemaObject, SecurityRequirement } from './openapi-types.js';

/** How callers authenticate; an operation's `security` lists the combinations its access rule accepts. */
export const SECURITY_SCHEMES: OpenApiDocument['components']['securitySchemes'] = {
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description:
      'Dashboard session from POST /api/v1/auth/login. The requirement lists the minimum role in the ' +
      "session's active organization (`user`: signed in, no organization needed). State-changing requests " +
      'with the cookie must come from the service or an allowed dashboard Origin.',
  },
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'API key (aat_…, service_…, gpat_…)',
    description: 'An API key of the organization. The requirement lists the scopes the key must hold.',
  },
  attestationToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'The RS256 token of POST /api/v1/attestation/validate or /refresh, for the app the identity headers name. ' +
      'Verify it with /.well-known/jwks.json.',
  },
  bundleId: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Bundle-ID',
    description:
      "The app's Bundle ID, at most 155 characters; with X-Team-ID it names the app (the SDK surfaces). Longer is 400.",
  },
  teamId: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Team-ID',
    description: "The app's developer Team ID (Apple's have 10 characters; over 64 is 400).",
  },
  packageName: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Package-Name',
    description:
      "The app's Android package name, at most 150 characters: names the app instead of X-Bundle-ID and X-Team-ID (Android SDK).",
  },
};

/** The security requirements of an access rule: alternatives, each a set of schemes sent together. */
export function securityOf(rule: AccessRule): SecurityRequirement[] {
  if (rule.public) return [];
  // An SDK route names its app by X-Bundle-ID and X-Team-ID (iOS) or X-Package-Name (Android).
  const tenants: SecurityRequirement[] = rule.tenant ? [{ bundleId: [], teamId: [] }, { packageName: [] }] : [{}];
  const alternatives: SecurityRequirement[] = [];
  for (const tenant of tenants) {
    if (rule.tenant && rule.deviceToken) {
      alternatives.push({ ...tenant, attestationToken: [] }, { ...tenant, apiKey: [SDK_KEY_SCOPE] });
    }
    if (rule.tenant && rule.deviceTokenIfSent) alternatives.push(tenant, { ...tenant, attestationToken: [] });
    if (rule.session) alternatives.push({ ...tenant, session: [rule.session] });
    if (rule.apiKey) alternatives.push({ ...tenant, apiKey: [...rule.apiKey] });
    else if (rule.personalKey) alternatives.push({ ...tenant, apiKey: [...rule.personalKey] });
  }
  if (!alternatives.length && rule.tenant) alternatives.push(...tenants);
  return alternatives;
}

const FIELD_ERROR: SchemaObject = {
  type: 'object',
  required: ['field', 'message'],
  properties: {
    field: { type: 'string', description: 'The offending field, dotted for nested ones (`rules.0.value`).' },
    message: { type: 'string' },
  },
};

const ERROR: SchemaObject = {
  type: 'object',
  description:
    'The one envelope of every error. Some errors add documented members (for example 402 `quota_exceeded`).',
  required: ['error', 'code', 'requestId'],
  properties: {
    error: { type: 'string', description: 'A readable message.' },
    code: { type: 'string', description: 'A stable machine-readable code, such as `not_found` or `rate_limited`.' },
    hint: { type: 'string', description: 'What to do about it, when there is something to do.' },
    requestId: { type: 'string', description: 'The X-Request-ID of the request, for support and logs.' },
    fields: {
      type: 'array',
      description: 'Each invalid field (422 only).',
      items: { $ref: '#/components/schemas/FieldError' },
    },
  },
};

const QUOTA_EXCEEDED: SchemaObject = {
  type: 'object',
  description: 'The error envelope of 402 `quota_exceeded`, with what the plan allows and how to get more.',
  required: [...(ERROR.required ?? []), 'message', 'upgradeUrl', 'limit', 'current'],
  properties: {
    ...ERROR.properties,
    message: { type: 'string', description: 'What is over the limit and what still works.' },
    upgradeUrl: { type: 'string', format: 'uri', description: "The dashboard's billing page." },
    limit: { type: 'integer', description: "The plan's monthly active devices." },
    current: { type: 'integer', description: 'Monthly active devices so far in this period.' },
  },
};

const LIMIT_REACHED: SchemaObject = {
  type: 'object',
  description: 'The error envelope of a 403 that may be a plan limit reached: then with `limit` and `current`.',
  required: ERROR.required,
  properties: {
    ...ERROR.properties,
    limit: { type: 'integer', description: "The plan's limit." },
    current: { type: 'integer', description: 'What is used of it.' },
  },
};

const SSO_REQUIRED: SchemaObject = {
  type: 'object',
  description:
    'The error envelope of a refused sign-in or switch; with `sso_required` or `sign_in_required`, where to sign in instead.',
  required: ERROR.required,
  properties: {
    ...ERROR.properties,
    ssoStartUrl: {
      type: 'string',
      description:
        "With `sso_required` (or `sign_in_required` for an organization with SSO): the organization's SSO start, relative to the service.",
    },
  },
};

const FLAG_HAS_DEPENDENTS: SchemaObject = {
  type: 'object',
  description: 'The error envelope of a 409; with `flag_has_dependents`, the flags that need this one.',
  required: ERROR.required,
  properties: {
    ...ERROR.properties,
    dependents: {
      type: 'array',
      items: { type: 'string' },
      description: 'Keys of the flags naming it a prerequisite.',
    },
  },
};

export const ERROR_SCHEMAS: Record<string, SchemaObject> = {
  FlagHasDependents: FLAG_HAS_DEPENDENTS,
  SsoRequired: SSO_REQUIRED,
  LimitReached: LIMIT_REACHED,
  Error: ERROR,
  FieldError: FIELD_ERROR,
  QuotaExceeded: QUOTA_EXCEEDED,
  ValidationError: {
    allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', required: ['fields'] }],
  },
};

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the window.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window resets, Unix seconds.', schema: { type: 'integer' } },
};

function errorResponse(description: string, schema = 'Error', headers?: Record<string, unknown>): ResponseObject {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
  };
}

/** Shared error responses, referenced from every operation. */
export const ERROR_RESPONSES: Record<string, ResponseObject> = {
  BadRequest: errorResponse(
    'Invalid request: malformed JSON, a missing header, or (on routes that document 400) an invalid field.',
  ),
  Unauthorized: errorResponse('No valid credentials for this route (`unauthorized`).'),
  Forbidden: errorResponse(
    'Authenticated, but not allowed: role, scope, inactive app or organization, or cross-site request.',
  ),
  SeatsTaken: errorResponse(
    'Not allowed, or every seat of the plan is taken (`limit` and `current` say how many).',
    'LimitReached',
  ),
  SsoRequired: errorResponse(
    'Refused: a cross-site request, (`sso_required`) an organization that requires single sign-on, or (`sign_in_required`) an organization the session was not signed in to.',
    'SsoRequired',
  ),
  FlagHasDependents: errorResponse(
    'A conflict; with `flag_has_dependents`, other flags name this one as a prerequisite (`dependents`).',
    'FlagHasDependents',
  ),
  NotFound: errorResponse(
    'The resource does not exist or is not visible to the caller (`not_found`, `app_not_found`).',
  ),
  UnsupportedMediaType: errorResponse(
    'The request carries a body that is not JSON (`unsupported_media_type`); send `Content-Type: application/json`.',
  ),
  ValidationFailed: errorResponse(
    'Invalid input: `fields` names each invalid field (`unprocessable_entity`).',
    'ValidationError',
  ),
  RateLimited: errorResponse('Too many requests (`rate_limited`); `Retry-After` says when to try again.', 'Error', {
    'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } },
    ...RATE_LIMIT_HEADERS,
  }),
  QuotaExceeded: errorResponse(
    "The plan's monthly active devices are used up and the grace period has ended (`quota_exceeded`); retrying does not help.",
    'QuotaExceeded',
  ),
  Error: errorResponse('Any other error, in the same envelope (5xx included).'),
};

export const RATE_LIMIT_RESPONSE_HEADERS = RATE_LIMIT_HEADERS;

export function responseRef(name: keyof typeof ERROR_RESPONSES): ResponseObject {
  return { $ref: `#/components/responses/${name}` };
}
