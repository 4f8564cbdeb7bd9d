import { VERIFICATION_REFUSALS } from '../device-tokens/verification-refusals.js';
import { OPENFEATURE_ROUTE_DOCS, OPENFEATURE_SCHEMAS } from '../openfeature/openfeature.openapi.js';
import { RATE_LIMIT_RESPONSE_HEADERS, responseRef } from './components.js';
import type { ParameterObject, RequestBodyObject, ResponseObject, SchemaObject } from './openapi-types.js';

/**
 * What the code cannot say about a route: precise response shapes of the SDK hot paths (their
 * handlers return plain objects built by services), non-JSON responses, and bodies read without
 * `@Body()`. Keyed by `METHOD /openapi/path`; merged over the generated operation.
 */
export interface RouteDoc {
  readonly summary?: string;
  readonly description?: string;
  readonly responses?: Record<string, ResponseObject>;
  readonly requestBody?: RequestBodyObject;
  readonly parameters?: readonly ParameterObject[];
}

const json = (schema: SchemaObject, description: string, headers?: Record<string, unknown>): ResponseObject => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});

const html = (description: string): ResponseObject => ({
  description,
  content: { 'text/html': { schema: { type: 'string' } } },
});

const ref = (name: string): SchemaObject => ({ $ref: `#/components/schemas/${name}` });

const dateTime: SchemaObject = { type: 'string', format: 'date-time' };

const SUBJECT_BINDING =
  'Subject binding: with the app setting `requireSignedSubject`, `subjectId` is accepted only with `subjectSignature` and `subjectExpiresAt` (epoch seconds, at most 30 days ahead) made by your backend: base64url(HMAC-SHA256(subject signing secret, "attestly-subject-v1\\n" + appId + "\\n" + subjectId + "\\n" + subjectExpiresAt)). Otherwise 401 `subject_signature_invalid`. Any app checks a signature it is sent.';

/** Response schemas written by hand, added to `components.schemas`. */
export const RESPONSE_SCHEMAS: Record<string, SchemaObject> = {
  ...(OPENFEATURE_SCHEMAS as Record<string, SchemaObject>),
  SsoConnection: {
    type: 'object',
    required: ['issuer', 'clientId', 'clientSecretSet', 'allowedDomains', 'defaultRole', 'enforce', 'redirectUri'],
    properties: {
      issuer: { type: 'string', format: 'uri' },
      clientId: { type: 'string' },
      clientSecretSet: { type: 'boolean', const: true, description: 'The client secret is write-only.' },
      allowedDomains: { type: 'array', items: { type: 'string' } },
      defaultRole: { type: 'string', enum: ['viewer', 'member', 'admin'] },
      enforce: { type: 'boolean', description: 'Password sign-in refused to members other than Owners.' },
      redirectUri: { type: 'string', format: 'uri', description: 'Register this at the provider.' },
      createdAt: dateTime,
      updatedAt: dateTime,
    },
  },
  SsoDiscovery: {
    type: 'object',
    required: ['sso', 'startUrl'],
    properties: {
      sso: { type: 'boolean' },
      startUrl: { type: ['string', 'null'], format: 'uri', description: 'Open in the browser to sign in.' },
    },
  },
  AttestationChallenge: {
    type: 'object',
    required: ['challenge', 'expiresAt'],
    properties: {
      challenge: { type: 'string', format: 'byte', description: '32 random bytes, base64; single use, for this app.' },
      expiresAt: { ...dateTime, description: 'The challenge is refused after this instant.' },
    },
  },
  AttestationToken: {
    type: 'object',
    required: ['token', 'tokenType', 'expiresAt', 'riskScore'],
    properties: {
      token: { type: 'string', description: 'RS256 JWT for the device; verify with /.well-known/jwks.json.' },
      tokenType: { type: 'string', const: 'Bearer' },
      expiresAt: dateTime,
      riskScore: { type: 'number', description: "The device's risk score when the token was minted." },
    },
  },
  TokenVerification: {
    type: 'object',
    required: ['valid', 'claims'],
    properties: {
      valid: { type: 'boolean' },
      claims: {
        type: ['object', 'null'],
        description: "The token's claims when valid (sub, iss, aud, iat, exp, jti, org_id, app_id, env, …); else null.",
      },
      reason: {
        type: 'string',
        enum: [...VERIFICATION_REFUSALS],
        description: 'Why the token is not valid; absent when it is.',
      },
    },
  },
  FlagValue: {
    description: 'A flag value in its type: boolean, integer, double, string or JSON.',
    type: ['boolean', 'number', 'string', 'object', 'array', 'null'],
  },
  EvaluatedFlags: {
    type: 'object',
    required: ['flags'],
    properties: {
      flags: {
        type: 'object',
        description: "Each flag's key and its value for this device and environment.",
        additionalProperties: ref('FlagValue'),
      },
    },
  },
  Jwks: {
    type: 'object',
    required: ['keys'],
    properties: {
      keys: {
        type: 'array',
        description: 'The current key first, then recently retired ones that still verify unexpired tokens.',
        items: {
          type: 'object',
          required: ['kty', 'kid', 'n', 'e', 'alg', 'use'],
          properties: {
            kty: { type: 'string', const: 'RSA' },
            kid: { type: 'string', description: 'RFC 7638 thumbprint; the `kid` header of the tokens it signed.' },
            n: { type: 'string' },
            e: { type: 'string' },
            alg: { type: 'string', const: 'RS256' },
            use: { type: 'string', const: 'sig' },
          },
        },
      },
    },
  },
  Liveness: {
    type: 'object',
    required: ['status', 'timestamp', 'commit'],
    properties: { status: { type: 'string', const: 'healthy' }, timestamp: dateTime, commit: { type: 'string' } },
  },
  ServiceProbe: {
    type: 'object',
    required: ['status', 'latencyMs'],
    properties: {
      status: { type: 'string', enum: ['ok', 'degraded'] },
      latencyMs: { type: 'number', description: '-1 when the service did not answer.' },
    },
  },
  HealthSummary: {
    type: 'object',
    required: ['status', 'version', 'services', 'timestamp', 'commit'],
    properties: {
      status: { type: 'string', enum: ['ok', 'degraded'] },
      version: { type: 'string', const: 'v1' },
      services: {
        type: 'object',
        required: ['api', 'db'],
        properties: { api: ref('ServiceProbe'), db: ref('ServiceProbe') },
      },
      timestamp: dateTime,
      commit: { type: 'string' },
      tenant: {
        type: 'object',
        description:
          'With X-Bundle-ID and X-Team-ID, whether that app is registered; left out when the database is down.',
        required: ['found', 'appRegistered', 'attestationEnabled'],
        properties: {
          found: { type: 'boolean' },
          appRegistered: { type: 'boolean' },
          attestationEnabled: { type: ['boolean', 'null'] },
          hint: { type: 'string' },
        },
      },
    },
  },
  ComponentHealth: {
    type: 'object',
    required: ['status'],
    properties: {
      status: { type: 'string', enum: ['healthy', 'unhealthy'] },
      latencyMs: { type: 'number' },
      error: { type: 'string' },
    },
  },
  Readiness: {
    type: 'object',
    required: ['status', 'timestamp', 'components', 'version'],
    properties: {
      status: { type: 'string', enum: ['healthy', 'degraded'] },
      timestamp: dateTime,
      components: {
        type: 'object',
        required: ['database', 'attestation', 'featureFlags', 'jwtSigning'],
        properties: {
          database: ref('ComponentHealth'),
          attestation: ref('ComponentHealth'),
          featureFlags: ref('ComponentHealth'),
          jwtSigning: ref('ComponentHealth'),
          redis: { ...ref('ComponentHealth'), description: 'With REDIS_URL set: the shared Redis.' },
        },
      },
      version: { type: 'string', description: 'The deployed commit.' },
    },
  },
};

const ETAG_HEADERS = {
  ETag: { description: 'Strong tag of the body (a digest of its bytes).', schema: { type: 'string' } },
  'Cache-Control': { schema: { type: 'string', example: 'private, no-cache' } },
};

const SDK_HEADERS: readonly ParameterObject[] = [
  [
    'X-Device-ID',
    "The device identifier rules and overrides match. With a device token it defaults to the token's subject and may only repeat it (403 `device_id_mismatch`); with an API key it names the device.",
  ],
  ['X-App-Version', 'The app version, for `app_version` rules.'],
  ['X-OS-Version', 'The OS version, for `os_version` rules.'],
  ['X-Device-Model', 'The device model, for `device_model` rules.'],
  ['X-Locale', 'The locale (else the first Accept-Language entry).'],
  ['X-Country', 'The ISO country code, for `country` rules.'],
  ['X-User-ID', 'Your user id, for `user_id` rules and rollouts.'],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: false,
  description,
  schema: { type: 'string', maxLength: 200 },
}));

const deviceForm = (fields: Record<string, string>, required: readonly string[]): RequestBodyObject => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': {
      schema: {
        type: 'object',
        required: [...required],
        properties: Object.fromEntries(
          Object.entries(fields).map(([name, description]) => [name, { type: 'string', description }]),
        ),
      },
    },
  },
});

const SESSION_ID = 'The CLI session id from the verification URL.';
const CSRF = 'The form token of the page.';
const PAGE_ANSWERS: Record<string, ResponseObject> = {
  '303': { description: 'Done: back to the review page (`/device?session_id=…`).' },
  '4XX': html('The page again with what went wrong (invalid link, signed out, expired form, cross-site post).'),
};

const query = (name: string, description: string): ParameterObject => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: { type: 'string', maxLength: 2048 },
});

const SSO_PAGE = html('A page saying why the sign-in did not happen and what to do; nothing was created.');

export const ROUTE_DOCS: Record<string, RouteDoc> = {
  ...(OPENFEATURE_ROUTE_DOCS as Record<string, RouteDoc>),
  'GET /api/v1/attestation/challenge': {
    summary: 'Issue a single-use attestation challenge',
    responses: { '200': json(ref('AttestationChallenge'), 'A fresh challenge.', RATE_LIMIT_RESPONSE_HEADERS) },
  },
  'POST /api/v1/attestation/validate': {
    summary: "Verify a device's App Attest attestation and mint a token",
    description: SUBJECT_BINDING,
    responses: {
      '402': responseRef('QuotaExceeded'),
      '200': json(
        ref('AttestationToken'),
        'The attestation verified; a token for the device.',
        RATE_LIMIT_RESPONSE_HEADERS,
      ),
    },
  },
  'POST /api/v1/attestation/refresh': {
    summary: "Mint a new token from a known device's assertion",
    description: `${SUBJECT_BINDING} A subjectId different from the device's is recorded as a \`subject_changed\` device event.`,
    responses: {
      '200': json(ref('AttestationToken'), 'The assertion verified; a new token.', RATE_LIMIT_RESPONSE_HEADERS),
    },
  },
  'POST /api/v1/apps/{appID}/subject-signing-secret': {
    summary: "Generate the app's subject signing secret (shown once; replaces the previous one)",
    description: `${SUBJECT_BINDING} Turn the setting on with PUT /api/v1/apps/{appID} \`{"requireSignedSubject": true}\` once your backend signs.`,
    responses: {
      '200': json(
        {
          type: 'object',
          required: ['subjectSigningSecret', 'app'],
          properties: {
            subjectSigningSecret: {
              type: 'string',
              description: 'The HMAC key, `subsec_` + 43 characters. Shown only here.',
            },
            app: { type: 'object', description: 'The app, as GET /api/v1/apps/{appID} answers it.' },
          },
        },
        'The new secret and the app.',
      ),
    },
  },
  'POST /api/v1/attestation/android/validate': {
    summary: "Verify an Android device's Play Integrity token and mint a token",
    description:
      "Named by `X-Package-Name`. The token is decrypted and verified locally with the app's Play Integrity keys, and must be bound to the challenge (`requestHash` = base64url(SHA-256(challenge)), or the challenge as a classic nonce); the challenge is spent first, as for App Attest. `installationId` is the SDK's random id of the installation: the same id re-attests the same device (Android has no assertion counter, so a refresh is a new integrity token and challenge). " +
      SUBJECT_BINDING,
    responses: {
      '402': responseRef('QuotaExceeded'),
      '200': json(
        ref('AttestationToken'),
        'The verdict verified; a token for the device.',
        RATE_LIMIT_RESPONSE_HEADERS,
      ),
    },
  },
  'GET /api/v1/apps/{appID}/android': {
    summary: "The app's Android identity and Play Integrity policy (never the keys)",
    description: 'Admins only. 404 when the app has no Android identity.',
  },
  'PUT /api/v1/apps/{appID}/android': {
    summary: "Set the app's Android identity: package name, signing certificates, Play Integrity keys and policy",
    description:
      'Paste the response decryption key (base64 AES-256) and verification key (base64 DER EC P-256) from Play Console; they are stored encrypted and never returned. Certificate digests are SHA-256, hex (colons optional) or base64. The keys are required the first time and kept when left out later; policy fields left out keep their value. A package name belongs to one app across the service (409).',
  },
  'DELETE /api/v1/apps/{appID}/android': {
    summary: "Remove the app's Android identity (Android SDK calls stop resolving the app)",
    description:
      '409 when the app is Android-only: the identity is its only one. Give the app a Bundle ID and Team ID first (PUT /api/v1/apps/{appID}), or delete the app.',
  },
  'POST /api/v1/apps': {
    summary: 'Register an app: its iOS identity, its Android identity, or both',
    description:
      'Send `bundleId` and `teamId` (iOS), `android` (the body of PUT /api/v1/apps/{appID}/android, both keys required), or all three. Without `android`, a missing `bundleId` or `teamId` is a 400; one without the other always is. The app and its Android identity are stored together: a refused Android identity leaves no app behind. 409 when the Bundle ID and Team ID, or the package name, belong to another app. An Android-only app answers `bundleId` and `teamId` as null and is reached by `X-Package-Name` only.',
  },
  'PUT /api/v1/apps/{appID}': {
    summary: "Change an app's settings",
    description:
      "An app's `bundleId` and `teamId` are immutable once set: an Android-only app may be given both, once (409 for other values after that, or when another app has them; the same values change nothing).",
  },
  'POST /api/v1/attestation/debug': {
    summary: 'Exchange a debug token (Simulator, CI) for a device token marked debug',
    description:
      'The token carries `env: "debug"` and `debug: true`; the device is never counted as a monthly active device. `limitedUse: true` mints a 5-minute token a backend may consume once (POST /api/v1/tokens/verify).',
    responses: {
      '200': json(
        ref('AttestationToken'),
        'The debug token is valid; a token for the build.',
        RATE_LIMIT_RESPONSE_HEADERS,
      ),
    },
  },
  'POST /api/v1/tokens/verify': {
    summary: 'Verify a device token from a backend, optionally using it up',
    description:
      "Signature, expiry, the organization of the API key owning the token's app, the device or debug token not revoked, not consumed. `consume: true` records the `jti` until the token expires: any later verification on any instance answers `already_used`.",
    responses: {
      '200': json(
        ref('TokenVerification'),
        'The verdict (a refused token is still a 200).',
        RATE_LIMIT_RESPONSE_HEADERS,
      ),
    },
  },
  'GET /api/v1/flags': {
    summary: "Every flag's value for this device",
    description:
      'Conditional: every answer carries a strong `ETag` of its body; send it back in `If-None-Match` and an unchanged result answers 304 with no body.',
    parameters: [
      ...SDK_HEADERS,
      {
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'The `ETag` of an earlier answer (a list, or `*`): 304 when the result is unchanged.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': json(ref('EvaluatedFlags'), 'The evaluated flags.', { ...RATE_LIMIT_RESPONSE_HEADERS, ...ETAG_HEADERS }),
      '304': {
        description: 'The result equals the one `If-None-Match` names; no body.',
        headers: { ...RATE_LIMIT_RESPONSE_HEADERS, ...ETAG_HEADERS },
      },
    },
  },
  'GET /api/v1/flags/stream': {
    summary: 'Flag values as server-sent events (Business plan and above)',
    parameters: SDK_HEADERS,
    responses: {
      '200': {
        description:
          'An event stream: `event: snapshot` with `data` as in GET /api/v1/flags on connect and after every change, and a `: heartbeat` comment every 15 s. When the device is blocked or the app deactivated or deleted, `event: revoked` with `data` `{"reason": "device_blocked" | "debug_token_revoked" | "app_inactive" | "app_deleted"}`, then the end of the stream.',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
    },
  },
  'POST /api/v1/flags/{flagId}/evaluate': { summary: 'Evaluate one flag for a device context' },
  'GET /api/v1/analytics/devices/{keyId}': {
    summary: "A device's profile and attestation history",
    description: "An API key spends the organization's API budget (`rate_limited` when it is used up).",
  },
  'GET /api/v1/analytics/events': {
    summary: 'The attestation event log',
    description: "An API key spends the organization's API budget (`rate_limited` when it is used up).",
  },
  'POST /api/v1/auth/login': {
    summary: 'Sign in with e-mail and password (cookie session)',
    description:
      'The session acts in every organization of the user except those that enforce single sign-on on them; `sso_required` only when every one does. Failed sign-ins are limited inside the password gate (decision 0066): per account (then the wrong-password 401), per browser that signed in before (its device cookie, `attestly.device`, set on success) and per client address (429).',
    responses: { '403': responseRef('SsoRequired'), '429': responseRef('RateLimited') },
  },
  'POST /api/v1/auth/switch-org': {
    summary: 'Switch the session to another organization',
    description:
      "Only to an organization the session's sign-in admits: a session made by an organization's identity provider acts only there (`sign_in_required` elsewhere), a password session not where SSO is enforced (`sso_required`).",
    responses: { '403': responseRef('SsoRequired') },
  },
  'POST /api/v1/auth/leave-org': {
    summary: 'Leave an organization (not as its Owner); needs no session in it',
  },
  // FlagsController serves each flag route at two addresses, by id and by key; each address has
  // its own summary here (an `@ApiOperation` summary would name both alike).
  'DELETE /api/v1/dashboard/flags/{flagId}': {
    summary: 'Delete a flag',
    responses: { '409': responseRef('FlagHasDependents') },
  },
  'DELETE /api/v1/dashboard/apps/{appId}/flags/{flagKey}': {
    summary: 'Delete a flag by its key',
    responses: { '409': responseRef('FlagHasDependents') },
  },
  'GET /api/v1/dashboard/apps/{appId}/flags/{flagKey}': { summary: 'Get a flag by its key' },
  'PATCH /api/v1/dashboard/apps/{appId}/flags/{flagKey}': {
    summary: "Update a flag's name, description or default value, by key",
  },
  'PUT /api/v1/dashboard/apps/{appId}/flags/{flagKey}/environments/{environment}': {
    summary: "Replace one environment's state, value and rules, by flag key",
  },
  'PUT /api/v1/dashboard/flags/{flagId}/environments/{environment}/approval': {
    summary: 'Require approved change requests for changes of an environment (Enterprise)',
  },
  'PUT /api/v1/dashboard/apps/{appId}/flags/{flagKey}/environments/{environment}/approval': {
    summary: 'Require approved change requests for an environment, by flag key (Enterprise)',
  },
  'GET /api/v1/dashboard/apps/{appId}/flags/{flagKey}/history': { summary: "A flag's versions, newest first, by key" },
  'POST /api/v1/dashboard/apps/{appId}/flags/{flagKey}/rollback': {
    summary: 'Restore an earlier version as a new one, by flag key',
  },
  'GET /api/v1/dashboard/apps/{appId}/flags/{flagKey}/overrides': {
    summary: "A flag's device overrides, newest first, by key",
  },
  'POST /api/v1/dashboard/apps/{appId}/flags/{flagKey}/overrides': {
    summary: 'Force a value for one device, by flag key',
  },
  'DELETE /api/v1/dashboard/apps/{appId}/flags/{flagKey}/overrides/{overrideId}': {
    summary: 'Remove a device override, by flag key',
  },
  'GET /api/v1/dashboard/flags/{flagId}/schedules': {
    summary: "A flag's scheduled changes, newest first (Business plan and above)",
  },
  'GET /api/v1/dashboard/apps/{appId}/flags/{flagKey}/schedules': {
    summary: "A flag's scheduled changes, newest first, by key (Business plan and above)",
  },
  'POST /api/v1/dashboard/flags/{flagId}/schedules': {
    summary: 'Schedule a change of one environment (Business plan and above)',
    description:
      'At `runAt` the change is applied once, as a new flag version with its audit entry, `flag.updated` webhook, stream update and flag toggle notice. A change that can no longer apply then marks the schedule `failed` with the reason.',
  },
  'POST /api/v1/dashboard/apps/{appId}/flags/{flagKey}/schedules': {
    summary: 'Schedule a change of one environment, by flag key (Business plan and above)',
  },
  'DELETE /api/v1/dashboard/flags/{flagId}/schedules/{scheduleId}': {
    summary: 'Cancel a pending schedule (409 once applied, failed or cancelled)',
  },
  'DELETE /api/v1/dashboard/apps/{appId}/flags/{flagKey}/schedules/{scheduleId}': {
    summary: 'Cancel a pending schedule, by flag key',
  },
  'POST /api/v1/org/invites': {
    summary: 'Invite someone to the organization',
    responses: { '403': responseRef('SeatsTaken') },
  },
  'GET /api/v1/auth/verify-email': {
    summary: 'Confirm the e-mail address of a new account and sign in',
    parameters: [
      {
        name: 'token',
        in: 'query',
        required: true,
        description: 'The token of the confirmation link.',
        schema: { type: 'string' },
      },
    ],
    responses: { '400': responseRef('BadRequest') },
  },
  'POST /api/v1/auth/forgot-password': { summary: 'Mail a password-reset link' },
  'POST /api/v1/auth/reset-password': { summary: 'Set a new password with a reset token' },
  'GET /.well-known/jwks.json': {
    summary: 'Public keys that verify attestation tokens',
    responses: {
      '200': json(ref('Jwks'), 'The JSON Web Key Set; cacheable for 5 minutes.', {
        'Cache-Control': { schema: { type: 'string', example: 'public, max-age=300' } },
      }),
    },
  },
  'GET /health': {
    summary: 'Liveness probe (no database access)',
    responses: { '200': json(ref('Liveness'), 'The process answers.') },
  },
  'GET /api/v1/health': {
    summary: 'Service summary, and optionally whether an app is registered',
    responses: {
      '200': json(ref('HealthSummary'), 'The summary; `status` is `degraded` when the database check failed.'),
    },
  },
  'GET /api/v1/health/status': {
    summary: 'Readiness probe',
    responses: {
      '200': json(ref('Readiness'), 'Every component is healthy.'),
      '503': json(ref('Readiness'), 'At least one component is unhealthy.'),
    },
  },
  'GET /api/v1/openapi.json': {
    summary: 'This OpenAPI document',
    responses: { '200': json({ type: 'object', description: 'An OpenAPI 3.1 document.' }, 'The document.') },
  },
  'GET /metrics': {
    summary: 'Prometheus metrics',
    description:
      'With METRICS_TOKEN set, requires `Authorization: Bearer <METRICS_TOKEN>`. In production (`NODE_ENV=production`) without METRICS_TOKEN, answers 403.',
    responses: {
      '401': responseRef('Unauthorized'),
      '403': responseRef('Forbidden'),
      '200': {
        description: 'Prometheus text exposition format 0.0.4.',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
    },
  },
  'POST /api/v1/billing/webhook': {
    summary: 'Stripe webhook',
    description: 'Authenticated by the `Stripe-Signature` header over the raw body.',
    requestBody: {
      required: true,
      content: { 'application/json': { schema: { type: 'object', description: 'A Stripe event.' } } },
    },
  },
  'GET /device': {
    summary: 'Device-login page for a CLI session',
    responses: {
      '200': html('Sign in, choose an organization, or review the request.'),
      '422': responseRef('ValidationFailed'),
      '4XX': html('Why there is nothing to do: invalid link, unknown, decided or expired request.'),
    },
  },
  'POST /device/login': {
    summary: 'Sign in from the device-login page',
    requestBody: deviceForm({ session_id: SESSION_ID, email: 'E-mail address.', password: 'Password.' }, [
      'session_id',
    ]),
    responses: PAGE_ANSWERS,
  },
  'POST /device/approve': {
    summary: 'Approve the CLI session',
    requestBody: deviceForm({ session_id: SESSION_ID, csrf_token: CSRF }, ['session_id', 'csrf_token']),
    responses: { '200': html('Approved: the CLI is signed in.'), '4XX': PAGE_ANSWERS['4XX'] },
  },
  'POST /device/deny': {
    summary: 'Deny the CLI session',
    requestBody: deviceForm({ session_id: SESSION_ID, csrf_token: CSRF }, ['session_id', 'csrf_token']),
    responses: { '200': html('Denied.'), '4XX': PAGE_ANSWERS['4XX'] },
  },
  'POST /device/organization': {
    summary: 'Switch organization on the device-login page',
    requestBody: deviceForm({ session_id: SESSION_ID, csrf_token: CSRF, slug: 'The organization to act in.' }, [
      'session_id',
      'csrf_token',
      'slug',
    ]),
    responses: PAGE_ANSWERS,
  },
  'POST /device/logout': {
    summary: 'Sign out on the device-login page',
    requestBody: deviceForm({ session_id: SESSION_ID, csrf_token: CSRF }, ['session_id', 'csrf_token']),
    responses: PAGE_ANSWERS,
  },
  'GET /api/v1/org/sso': {
    summary: "The organization's OpenID Connect connection (docs/sso.md)",
    responses: { '200': json(ref('SsoConnection'), 'The connection; the client secret is never shown.') },
  },
  'PUT /api/v1/org/sso': {
    summary: 'Create or replace the OpenID Connect connection after checking discovery',
    responses: { '200': json(ref('SsoConnection'), 'Saved.') },
  },
  'GET /api/v1/org/sso/domains': {
    summary: "The connection's e-mail domains, their verification and the TXT record that proves each",
  },
  'POST /api/v1/org/sso/domains/{domain}/verify': {
    summary: "Look the domain's TXT record up now and verify the domain",
    parameters: [{ name: 'domain', in: 'path', required: true, schema: { type: 'string', maxLength: 253 } }],
    description:
      'A verified domain routes discovery and lets the provider sign in its addresses; it belongs to one organization (409 when another holds it). 422 `domain_not_verified` names the record to publish.',
  },
  'POST /api/v1/auth/sso/discover': {
    summary: 'Where an e-mail address signs in with SSO',
    responses: { '200': json(ref('SsoDiscovery'), 'The same shape whether or not the domain has SSO.') },
  },
  'GET /api/v1/auth/sso/start': {
    summary: "Start single sign-on at the organization's identity provider",
    responses: {
      '200': html(
        'A navigation from another site (or a browser that does not send `Sec-Fetch-Site`): a page asking to continue, which posts to `/sso/start`.',
      ),
      '303': { description: "To the provider's authorization endpoint; sets the `attestly.sso_state` cookie." },
      '422': responseRef('ValidationFailed'),
      '4XX': SSO_PAGE,
      '5XX': SSO_PAGE,
    },
  },
  'GET /api/v1/auth/sso/callback': {
    summary: 'The identity provider sends the browser back here',
    parameters: [
      query('code', 'Authorization code.'),
      query('state', 'Must match the browser’s `attestly.sso_state` cookie.'),
      query('iss', 'The issuer (RFC 9207), checked when present.'),
      query('error', 'An error the provider answered instead of a code.'),
    ],
    responses: {
      '200': html(
        'The address has an account the provider may not sign in yet: a page to link it with the account’s password (posts to `/sso/link`).',
      ),
      '303': { description: 'Signed in (new session): to the dashboard, or back to the device-login page.' },
      '4XX': SSO_PAGE,
      '5XX': SSO_PAGE,
    },
  },
  'POST /sso/start': {
    summary: 'Continue to single sign-on (the confirmation page’s form; same-origin posts only)',
    requestBody: deviceForm({ org: 'Organization slug.', login_hint: 'E-mail address.', cli_session_id: SESSION_ID }, [
      'org',
    ]),
    responses: {
      '200': html("Continues (by navigation) to the provider's authorization endpoint; sets `attestly.sso_state`."),
      '4XX': SSO_PAGE,
      '5XX': SSO_PAGE,
    },
  },
  'POST /sso/link': {
    summary: "Link the account to the organization's provider with its password, and sign in",
    requestBody: deviceForm({ link_token: 'From the link page.', password: "The account's password." }, [
      'link_token',
      'password',
    ]),
    responses: {
      '303': { description: 'Linked and signed in: to the dashboard, or back to the device-login page.' },
      '4XX': SSO_PAGE,
      '5XX': SSO_PAGE,
    },
  },
  'POST /device/sso': {
    summary: 'Sign in with SSO from the device-login page',
    requestBody: deviceForm({ session_id: SESSION_ID, sso_email: 'Work e-mail address.' }, ['session_id']),
    responses: {
      '200': html('Continues (by navigation) to the organization’s SSO start, which returns to the review page.'),
      '4XX': PAGE_ANSWERS['4XX'],
    },
  },
};
