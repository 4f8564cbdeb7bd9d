import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type { HttpClient, TestApp } from '../harness/test-app.js';
import type { TestOrg } from './identity.js';

export const CLAIMS = '/api/v1/claims';
export const CONSOLE_CLAIMS = '/api/v1/org/claims';

export type ClaimRequest = Record<string, unknown>;

/** A fresh key, so claims of one test never collide with another's. */
export function claimKey(label = 'claim'): string {
  return `${label}_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
}

export function staticClaim(overrides: ClaimRequest = {}): ClaimRequest {
  const key = (overrides.claimKey as string | undefined) ?? claimKey('plan');
  return {
    claimKey: key,
    claimName: `Claim ${key}`,
    claimType: 'static',
    dataType: 'string',
    staticValue: 'gold',
    ...overrides,
  };
}

/** `high` for risky or jailbroken devices, `low` below risk 30, else no value. */
export function conditionalClaim(overrides: ClaimRequest = {}): ClaimRequest {
  const key = (overrides.claimKey as string | undefined) ?? claimKey('risk_band');
  return {
    claimKey: key,
    claimName: `Claim ${key}`,
    claimType: 'conditional',
    dataType: 'string',
    conditionalRules: [
      {
        operator: 'OR',
        conditions: [
          { field: 'risk_score', operator: 'greater_than_or_equal', value: '70' },
          { field: 'jailbreak_detected', operator: 'equals', value: 'true' },
        ],
        value: 'high',
        priority: 1,
      },
      {
        operator: 'AND',
        conditions: [{ field: 'risk_score', operator: 'less_than', value: '30' }],
        value: 'low',
        priority: 2,
      },
    ],
    ...overrides,
  };
}

export function dynamicClaim(overrides: ClaimRequest = {}): ClaimRequest {
  const key = (overrides.claimKey as string | undefined) ?? claimKey('region');
  return {
    claimKey: key,
    claimName: `Claim ${key}`,
    claimType: 'dynamic',
    dataType: 'string',
    dynamicExpression: "upper(coalesce(device.country, 'xx')) + '-' + coalesce(data.plan, 'free')",
    ...overrides,
  };
}

export function externalClaim(endpoint: string, overrides: ClaimRequest = {}): ClaimRequest {
  const key = (overrides.claimKey as string | undefined) ?? claimKey('loyalty');
  return {
    claimKey: key,
    claimName: `Claim ${key}`,
    claimType: 'external',
    dataType: 'number',
    externalConfig: {
      endpoint,
      method: 'GET',
      queryParameters: { device: '{{device.keyId}}' },
      responseMapping: { jsonPath: '$.points' },
      timeoutSeconds: 2,
      authentication: { type: 'bearer', credentials: { token: 'external-secret-token' } },
    },
    ...overrides,
  };
}

/** The console spelling of a session create request: snake_case top-level names. */
export function toConsoleRequest(request: ClaimRequest): ClaimRequest {
  return Object.fromEntries(
    Object.entries(request).map(([name, value]) => [
      name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
      value,
    ]),
  );
}

/** A claim as the session surface answers it. */
export interface ClaimBody {
  id: string;
  claimKey: string;
  claimName: string;
  claimType: string;
  dataType: string;
  description: string | null;
  priority: number;
  isActive: boolean;
  configuration: {
    staticValue: string | null;
    conditionalRules: Record<string, unknown>[] | null;
    dynamicExpression: string | null;
    externalConfig: Record<string, unknown> | null;
    validationRules: Record<string, unknown> | null;
  };
  createdAt: string;
  updatedAt: string;
}

export async function createClaim(agent: HttpClient, request: ClaimRequest): Promise<ClaimBody> {
  const response = await agent.post(CLAIMS).send(request);
  expect(response.status).toBe(201);
  return response.body as ClaimBody;
}

/** A claim written straight to the database, for arranging what the API would refuse (downgrades). */
export async function insertClaim(
  t: TestApp,
  org: TestOrg,
  options: { claimKey?: string; claimType?: string; value?: string; isActive?: boolean; priority?: number } = {},
): Promise<string> {
  const type = options.claimType ?? 'static';
  const [row] = await t.sql<{ id: string }>(
    `INSERT INTO custom_claims (organization_id, claim_key, claim_name, claim_type, data_type, priority, is_active,
                                static_value, dynamic_expression)
     VALUES ($1, $2, $2, $3, 'string', $4, $5, $6, $7) RETURNING id`,
    [
      org.id,
      options.claimKey ?? claimKey(),
      type,
      options.priority ?? 0,
      options.isActive ?? true,
      type === 'static' ? (options.value ?? 'seeded') : null,
      type === 'dynamic' ? `'${options.value ?? 'seeded'}'` : null,
    ],
  );
  return row.id;
}
