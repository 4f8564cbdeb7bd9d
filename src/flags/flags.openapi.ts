import type { SchemaObject } from '@nestjs/swagger';

/** Response shapes of the flag routes added for schedules, prerequisites and change requests. */

const dateTime = { type: 'string', format: 'date-time' } as const;
/** OpenAPI 3.1 (JSON Schema) spelling of a value that may be null. */
const nullable = (schema: SchemaObject & { type: string }): SchemaObject => ({
  ...schema,
  type: [schema.type, 'null'],
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
