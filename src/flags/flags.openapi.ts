import type { SchemaObject } from '@nestjs/swagger';

/** Response shapes of the flag routes added for schedules, prerequisites and change requests. */

const dateTime = { type: 'string', format: 'date-time' } as const;
/** OpenAPI 3.1 (JSON Schema) spelling of a value that may be null. */
const nullable = (schema: SchemaObject & { type: string }): SchemaObject => ({
  ...schema,
  type: [schema.type, 'null'],
  // An enum lists every value the schema admits: null too.
  ...(Array.isArray(schema.enum) ? { enum: [...(schema.enum as unknown[]), null] } : {}),
});

export const SCHEDULED_CHANGE_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'The environment fields the change sets; those left out stay as they are when it runs.',
  properties: {
    enabled: { type: 'boolean' },
    value: { type: 'string' },
    rules: { type: 'array', items: { type: 'object' } },
  },
};

export const SCHEDULE_SCHEMA: SchemaObject = {
  type: 'object',
  required: [
    'id',
    'flagId',
    'environment',
    'runAt',
    'change',
    'status',
    'failureReason',
    'createdBy',
    'createdAt',
    'appliedAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    flagId: { type: 'string', format: 'uuid' },
    environment: { type: 'string', enum: ['production', 'staging', 'development'] },
    runAt: dateTime,
    change: SCHEDULED_CHANGE_SCHEMA,
    status: {
      type: 'string',
      enum: ['pending', 'applied', 'failed', 'cancelled'],
      description: '`pending` until it runs; `applied` as a new flag version; `failed` with `failureReason`.',
    },
    failureReason: nullable({
      type: 'string',
      description: 'Why the change could not apply (flag deleted, rules invalid, plan limits).',
    }),
    appliedVersion: nullable({ type: 'integer', description: 'The flag version the change became.' }),
    createdBy: nullable({ type: 'string' }),
    createdAt: dateTime,
    appliedAt: nullable(dateTime),
  },
};

export const CHANGE_REQUEST_SCHEMA: SchemaObject = {
  type: 'object',
  required: [
    'id',
    'flagId',
    'flagKey',
    'appId',
    'kind',
    'environment',
    'change',
    'state',
    'baseVersion',
    'author',
    'createdAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    flagId: { type: 'string', format: 'uuid' },
    flagKey: { type: 'string' },
    appId: { type: 'string', format: 'uuid' },
    kind: {
      type: 'string',
      enum: ['environment', 'rollback', 'schedule', 'update', 'deletion', 'creation', 'override', 'override_removal'],
      description: 'The write it carries: which route made it (decision 0064).',
    },
    environment: nullable({ type: 'string', enum: ['production', 'staging', 'development'] }),
    change: {
      type: 'object',
      description:
        'The request as it was made: the PUT or PATCH body, `{version}`, the schedule, the new flag, the override, `{overrideId}`, or `{}` for a deletion.',
    },
    state: {
      type: 'string',
      enum: ['pending', 'approved', 'rejected', 'applied', 'stale'],
      description: '`stale` once the flag changed after the request was made (its version moved past `baseVersion`).',
    },
    baseVersion: { type: 'integer', description: 'The flag version the request was made against.' },
    author: nullable({ type: 'string' }),
    decidedBy: nullable({ type: 'string' }),
    decidedAt: nullable(dateTime),
    appliedBy: nullable({ type: 'string' }),
    appliedAt: nullable(dateTime),
    appliedVersion: nullable({ type: 'integer' }),
    createdAt: dateTime,
  },
};

export const CHANGE_REQUEST_WITH_DIFF_SCHEMA: SchemaObject = {
  ...CHANGE_REQUEST_SCHEMA,
  required: [...(CHANGE_REQUEST_SCHEMA.required ?? []), 'diff'],
  properties: {
    ...CHANGE_REQUEST_SCHEMA.properties,
    diff: {
      type: 'object',
      required: ['before', 'after'],
      description:
        'What the request changes (the environment, all environments for a rollback, the flag for an update or a deletion, the override) when it was made, and as it would leave it (null: gone).',
      properties: { before: {}, after: {} },
    },
  },
};

export const PROPOSED = {
  status: 202,
  description:
    'The write can change what a device is served in an environment that requires approval: a pending change request instead of the change.',
  schema: CHANGE_REQUEST_SCHEMA,
} as const;
