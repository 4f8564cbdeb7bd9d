import { describe, expect, it } from '@jest/globals';
import type { ClaimDataType, ClaimDefinition, ClaimValue, DeviceContext } from './claim-types.js';
import { evaluateClaim, evaluateClaims } from './claim-evaluator.js';
import { ExternalClaimFetcher } from './external-claim-fetcher.js';

const device: DeviceContext = {
  keyId: 'key-1',
  deviceModel: 'iPhone15,2',
  osVersion: '17.4',
  riskScore: 20,
  attestationCount: 4,
  jailbreakDetected: false,
  country: 'DE',
  additionalData: { plan: 'pro' },
};

let nextId = 0;
function claim(claimKey: string, fields: Partial<ClaimDefinition>): ClaimDefinition {
  nextId += 1;
  return {
    id: `00000000-0000-4000-8000-${String(nextId).padStart(12, '0')}`,
    claimKey,
    claimName: claimKey,
    claimType: 'static',
    dataType: 'string',
    priority: 0,
    isActive: true,
    staticValue: null,
    conditionalRules: null,
    dynamicExpression: null,
    externalConfig: null,
    validationRules: null,
    ...fields,
  };
}

const stubFetch =
  (body: unknown): typeof fetch =>
  () =>
    Promise.resolve(
      new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } }),
    );

describe('evaluateClaims', () => {
  it('returns typed values of active claims in priority order and explains failures', async () => {
    const claims = [
      claim('tier', {
        claimType: 'conditional',
        priority: 2,
        conditionalRules: [
          {
            operator: 'AND',
            priority: 0,
            value: 'gold',
            conditions: [{ field: 'risk_score', operator: 'less_than', value: '30' }],
          },
        ],
      }),
      claim('limit', { priority: 1, dataType: 'number', staticValue: '100' }),
      claim('label', {
        claimType: 'dynamic',
        priority: 3,
        dynamicExpression: "upper(device.country) + '-' + data.plan",
      }),
      claim('broken', { claimType: 'dynamic', priority: 0, dataType: 'number', dynamicExpression: 'device.country' }),
      claim('dormant', { priority: -1, staticValue: 'x', isActive: false }),
      claim('unmatched', {
        claimType: 'conditional',
        priority: 4,
        conditionalRules: [
          {
            operator: 'OR',
            priority: 0,
            value: 'never',
            conditions: [{ field: 'country', operator: 'equals', value: 'FR' }],
          },
        ],
      }),
    ];
    const { claims: values, results } = await evaluateClaims(claims, device);
    expect(values).toEqual({ limit: 100, tier: 'gold', label: 'DE-pro' });
    expect(Object.keys(values)).toEqual(['limit', 'tier', 'label']);
    expect(results.map((r) => r.claimKey)).toEqual(['broken', 'limit', 'tier', 'label', 'unmatched']);
    expect(results[0]).toMatchObject({
      evaluatedValue: 'DE',
      dataType: 'number',
      errors: ['value "DE" is not a finite number'],
    });
    expect(results[4]).toMatchObject({ evaluatedValue: null, errors: null });
    for (const result of results) expect(result.evaluationTime).toBeGreaterThanOrEqual(0);
  });

  it('orders equal priorities by claim key', async () => {
    const { claims } = await evaluateClaims(
      [claim('b', { staticValue: '1' }), claim('a', { staticValue: '2' })],
      device,
    );
    expect(Object.keys(claims)).toEqual(['a', 'b']);
  });

  it('gives every claim of one call the same `now`', async () => {
    const clock = [1000, 2000, 3000];
    const claims = [
      claim('a', { claimType: 'dynamic', dataType: 'number', dynamicExpression: 'now' }),
      claim('b', { claimType: 'dynamic', dataType: 'number', dynamicExpression: 'now' }),
    ];
    const { claims: values } = await evaluateClaims(claims, device, { now: () => clock.shift() ?? 0 });
    expect(values).toEqual({ a: 1000, b: 1000 });
  });

  it('fetches external claims through the fetcher and never throws for one that fails', async () => {
    const fetcher = new ExternalClaimFetcher({
      allowPrivateNetworks: true,
      fetch: stubFetch({ profile: { segment: 'beta' } }),
    });
    const external = claim('segment', {
      claimType: 'external',
      externalConfig: {
        endpoint: 'http://127.0.0.1:9/profile',
        method: 'GET',
        responseMapping: { jsonPath: '$.profile.segment' },
      },
    });
    const failing = claim('unreachable', {
      claimType: 'external',
      externalConfig: { endpoint: 'http://127.0.0.1:9/x', method: 'GET', responseMapping: { jsonPath: '$' } },
    });
    const failingFetcher = new ExternalClaimFetcher({
      allowPrivateNetworks: true,
      fetch: () => Promise.resolve(new Response('', { status: 500 })),
    });
    await expect(evaluateClaims([external], device, { fetcher })).resolves.toMatchObject({
      claims: { segment: 'beta' },
    });
    const { claims, results } = await evaluateClaims([failing], device, { fetcher: failingFetcher });
    expect(claims).toEqual({});
    expect(results[0].errors).toEqual(['endpoint answered 500 (1 attempt)']);
    const { results: withoutFetcher } = await evaluateClaims([external], device);
    expect(withoutFetcher[0].errors).toEqual(['external claims cannot be evaluated here']);
  });
});

describe('evaluateClaim', () => {
  it('returns the test result and the typed value, also for an inactive claim', async () => {
    const evaluation = await evaluateClaim(
      claim('flags', { dataType: 'object', staticValue: '{"beta": true}', isActive: false }),
      device,
    );
    expect(evaluation.value).toEqual({ beta: true });
    expect(evaluation.result).toEqual({
      claimKey: 'flags',
      evaluatedValue: '{"beta":true}',
      dataType: 'object',
      evaluationTime: expect.any(Number),
      errors: null,
    });
  });

  it.each<[ClaimDataType, string, ClaimValue, string]>([
    ['string', 'plain', 'plain', 'plain'],
    ['number', '1.50', 1.5, '1.5'],
    ['boolean', 'true', true, 'true'],
    ['array', '[1, "a"]', [1, 'a'], '[1,"a"]'],
    ['object', '{"a": {"b": 1}}', { a: { b: 1 } }, '{"a":{"b":1}}'],
    ['date', '2025-03-01T10:00:00+01:00', '2025-03-01T09:00:00.000Z', '2025-03-01T09:00:00.000Z'],
  ])('types a %s claim', async (dataType, staticValue, value, shown) => {
    const { result, value: typed } = await evaluateClaim(claim('c', { dataType, staticValue }), device);
    expect(typed).toEqual(value);
    expect(result.evaluatedValue).toBe(shown);
  });

  it('types dynamic results by the claim dataType', async () => {
    const array = await evaluateClaim(
      claim('c', { claimType: 'dynamic', dataType: 'array', dynamicExpression: '[device.country, device.riskScore]' }),
      device,
    );
    expect(array.value).toEqual(['DE', 20]);
    const flag = await evaluateClaim(
      claim('c', { claimType: 'dynamic', dataType: 'boolean', dynamicExpression: 'device.riskScore < 50' }),
      device,
    );
    expect(flag.value).toBe(true);
  });

  it('applies validation rules and keeps the rejected value visible', async () => {
    const { result, value } = await evaluateClaim(
      claim('score', {
        claimType: 'dynamic',
        dataType: 'number',
        dynamicExpression: 'device.riskScore * 10',
        validationRules: { maxValue: 100, customValidation: 'value % 3 == 0' },
      }),
      device,
    );
    expect(value).toBeNull();
    expect(result.evaluatedValue).toBe('200');
    expect(result.errors).toEqual(['value is greater than maxValue 100', 'value failed customValidation']);
  });

  it('treats a missing value as an error only when required', async () => {
    const rules = [
      {
        operator: 'AND' as const,
        priority: 0,
        value: 'x',
        conditions: [{ field: 'country' as const, operator: 'equals' as const, value: 'FR' }],
      },
    ];
    const optional = await evaluateClaim(claim('c', { claimType: 'conditional', conditionalRules: rules }), device);
    expect(optional.result.errors).toBeNull();
    const required = await evaluateClaim(
      claim('c', { claimType: 'conditional', conditionalRules: rules, validationRules: { required: true } }),
      device,
    );
    expect(required.result.errors).toEqual(['value is required']);
  });

  it('records broken stored definitions as errors instead of throwing', async () => {
    const cases: Partial<ClaimDefinition>[] = [
      { staticValue: null },
      { claimType: 'dynamic', dynamicExpression: 'constructor.constructor("return process")()' },
      { claimType: 'conditional', conditionalRules: [] },
      { claimType: 'bogus' as ClaimDefinition['claimType'] },
      { dataType: 'uuid' as ClaimDefinition['dataType'], staticValue: 'x' },
      { staticValue: 'x', validationRules: { pattern: '(a)\\1' } },
    ];
    for (const fields of cases) {
      const { result, value } = await evaluateClaim(claim('c', fields), device);
      expect(value).toBeNull();
      expect(result.errors).toHaveLength(1);
    }
  });
});
