/**
 * The OFREP routes in this service's OpenAPI document (src/openapi merges them): their handlers
 * write the body themselves, so the shapes are stated here, after OFREP's own OpenAPI document
 * (open-feature/protocol, service/openapi.yaml, 0.3.0).
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema, description: string, headers?: Schema) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});

const ETAG = {
  ETag: { description: 'Strong tag of the body (a digest of its bytes).', schema: { type: 'string' } },
  'Cache-Control': { schema: { type: 'string', example: 'private, no-cache' } },
};

const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'The `ETag` of an earlier answer (a list, or `*`): 304 when the result is unchanged.',
  schema: { type: 'string' },
};

const METADATA: Schema = {
  type: 'object',
  description:
    '`environment` and `valueType` always; `prerequisite` when a failed prerequisite switched the flag off; for an API key only, `ruleId` when a rule served, with `rolloutPercentage` for a SPLIT (a device token is not shown the targeting).',
  additionalProperties: { type: ['string', 'number', 'boolean'] },
};

export const OPENFEATURE_SCHEMAS: Record<string, Schema> = {
  OfrepEvaluationRequest: {
    type: 'object',
    properties: {
      context: {
        type: 'object',
        maxProperties: 50,
        description:
          'The evaluation context. `targetingKey`: the device id rollouts bucket on (required with an API key; with a device token, the token names the device and `targetingKey` may only repeat its subject). `environment`: production (default), staging or development. `deviceModel`, `osVersion`, `appVersion`, `locale`, `country`, `userId` feed the rule attributes of the same names, `riskScore` (0-100, API key only) `risk_score`; any other attribute (a string, number or boolean, at most 1,000 characters) is read by rules as `custom.<name>`. `deviceId` and `attestationStatus` are set by the service.',
        properties: {
          targetingKey: { type: 'string', maxLength: 200 },
          environment: { type: 'string', enum: ['production', 'staging', 'development'] },
        },
        additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
      },
    },
  },
  OfrepEvaluationSuccess: {
    type: 'object',
    required: ['key', 'value', 'reason', 'variant', 'metadata'],
    properties: {
      key: { type: 'string' },
      value: ref('FlagValue'),
      reason: {
        type: 'string',
        enum: ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DEFAULT', 'DISABLED'],
        description:
          'TARGETING_MATCH: a rule matched, or a device override applies. SPLIT: a rule with a partial rollout took the device in. STATIC: the environment has no rule and no prerequisite. DEFAULT: no rule matched, or a prerequisite failed. DISABLED: the environment is off.',
      },
      variant: {
        type: 'string',
        description:
          "The matched rule's name (`rule` for a device token), `override`, `value` (the environment's value) or `off` (the flag's default).",
      },
      metadata: METADATA,
    },
  },
  OfrepEvaluationFailure: {
    type: 'object',
    required: ['key', 'errorCode'],
    properties: {
      key: { type: 'string' },
      errorCode: {
        type: 'string',
        enum: ['FLAG_NOT_FOUND', 'PARSE_ERROR', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT', 'GENERAL'],
        description:
          "FLAG_NOT_FOUND: the app has no flag with this key. PARSE_ERROR: the request is not an evaluation request, or the value the flag serves does not fit its type. TARGETING_KEY_MISSING / INVALID_CONTEXT: the context. TYPE_MISMATCH is the provider's own: OFREP requests name no type.",
      },
      errorDetails: { type: 'string' },
    },
  },
  OfrepBulkEvaluationSuccess: {
    type: 'object',
    required: ['flags'],
    properties: {
      flags: {
        type: 'array',
        items: { oneOf: [ref('OfrepEvaluationSuccess'), ref('OfrepEvaluationFailure')] },
      },
    },
  },
  OfrepBulkEvaluationFailure: {
    type: 'object',
    required: ['errorCode'],
    properties: {
      errorCode: { type: 'string', enum: ['PARSE_ERROR', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT'] },
      errorDetails: { type: 'string' },
    },
  },
  OfrepConfiguration: {
    type: 'object',
    required: ['name', 'capabilities'],
    properties: {
      name: { type: 'string' },
      capabilities: {
        type: 'object',
        properties: {
          cacheInvalidation: {
            type: 'object',
            properties: {
              polling: {
                type: 'object',
                properties: { enabled: { type: 'boolean' }, minPollingIntervalMs: { type: 'integer' } },
              },
            },
          },
          flagEvaluation: {
            type: 'object',
            properties: { supportedTypes: { type: 'array', items: { type: 'string' } } },
          },
        },
      },
    },
  },
};

const REQUEST_BODY = {
  required: true,
  content: { 'application/json': { schema: ref('OfrepEvaluationRequest') } },
};

export const OPENFEATURE_ROUTE_DOCS: Record<string, Schema> = {
  'POST /ofrep/v1/evaluate/flags/{key}': {
    summary: 'OpenFeature (OFREP): evaluate one flag',
    description:
      "For OpenFeature's server providers (`@openfeature/ofrep-provider`): a device token, or an API key with `flags:read` and the device id as `context.targetingKey`. The same kernel, rollout buckets and rate limit as GET /api/v1/flags. Evaluation errors use OFREP's body; authentication and rate limits the service's error envelope.",
    requestBody: REQUEST_BODY,
    responses: {
      '200': json(ref('OfrepEvaluationSuccess'), 'The flag evaluated.'),
      '400': json(
        { oneOf: [ref('OfrepEvaluationFailure'), ref('Error')] },
        "OFREP's PARSE_ERROR, TARGETING_KEY_MISSING or INVALID_CONTEXT; the service's envelope when the body is not JSON or the identity headers are missing.",
      ),
      '404': json(
        { oneOf: [ref('OfrepEvaluationFailure'), ref('Error')] },
        "OFREP's FLAG_NOT_FOUND: the app has no flag with this key; the service's envelope when no app has the identity headers.",
      ),
    },
  },
  'POST /ofrep/v1/evaluate/flags': {
    summary: 'OpenFeature (OFREP): evaluate every flag',
    description:
      "For OpenFeature's web providers (`@openfeature/ofrep-web-provider`): every flag of the app, each a success or a failure. Conditional: a strong `ETag` of the body; a matching `If-None-Match` answers 304 with no body, so polling costs no transfer while nothing changed.",
    parameters: [IF_NONE_MATCH],
    requestBody: REQUEST_BODY,
    responses: {
      '200': json(ref('OfrepBulkEvaluationSuccess'), 'Every flag evaluated.', ETAG),
      '304': { description: 'The result equals the one `If-None-Match` names; no body.', headers: ETAG },
      '400': json(
        { oneOf: [ref('OfrepBulkEvaluationFailure'), ref('Error')] },
        "OFREP's PARSE_ERROR, TARGETING_KEY_MISSING or INVALID_CONTEXT; the service's envelope when the body is not JSON or the identity headers are missing.",
      ),
    },
  },
  'GET /ofrep/v1/configuration': {
    summary: 'OpenFeature (OFREP 0.1): provider configuration',
    description:
      'The configuration endpoint of OFREP 0.1 (removed in 0.2), for providers that still ask: polling supported, at most every 10 s, every value type.',
    parameters: [IF_NONE_MATCH],
    responses: {
      '200': json(ref('OfrepConfiguration'), 'The configuration.', ETAG),
      '304': { description: 'Unchanged; no body.', headers: ETAG },
    },
  },
};
