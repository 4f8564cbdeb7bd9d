import { describe, expect, it } from '@jest/globals';
import type { TokenSubject } from '../device-tokens/token.service.js';
import { tierDefinition } from '../common/tiers.js';
import { claimsWithinTier, tokenDeviceContext } from './claims-token-contributor.js';
import type { ClaimDefinition, ClaimType } from './engine/index.js';

function claim(claimKey: string, claimType: ClaimType, priority: number, isActive = true): ClaimDefinition {
  return {
    id: claimKey,
    claimKey,
    claimName: claimKey,
    claimType,
    dataType: 'string',
    priority,
    isActive,
    staticValue: claimType === 'static' ? 'x' : null,
    conditionalRules: null,
    dynamicExpression: claimType === 'dynamic' ? "'x'" : null,
    externalConfig: null,
    validationRules: null,
  };
}

describe('claims in tokens', () => {
  it('keeps the types the plan offers, up to its limit, in priority then key order', () => {
    const claims = [
      claim('b', 'static', 1),
      claim('a', 'static', 1),
      claim('dyn', 'dynamic', 0),
      claim('ext', 'external', 0),
      claim('off', 'static', -1, false),
    ];
    expect(claimsWithinTier(claims, tierDefinition('free')).map((c) => c.claimKey)).toEqual(['a']);
    expect(claimsWithinTier(claims, tierDefinition('basic')).map((c) => c.claimKey)).toEqual(['dyn', 'a', 'b']);
    expect(claimsWithinTier(claims, tierDefinition('enterprise')).map((c) => c.claimKey)).toEqual([
      'dyn',
      'ext',
      'a',
      'b',
    ]);
  });

  it('describes the device from the token subject', () => {
    const now = Date.parse('2030-01-10T12:00:00Z');
    const subject = {
      keyId: 'key',
      environment: 'production',
      riskScore: 12,
      attestationCount: 3,
      deviceModel: 'iPhone15,2',
      osVersion: null,
      appVersion: '2.0',
      country: 'DE',
      jailbreakDetected: false,
      firstSeenAt: new Date('2030-01-01T13:00:00Z'),
      failureCount: 2,
      subjectId: null,
    } as unknown as TokenSubject;
    expect(tokenDeviceContext(subject, now)).toEqual({
      keyId: 'key',
      deviceModel: 'iPhone15,2',
      osVersion: undefined,
      appVersion: '2.0',
      country: 'DE',
      riskScore: 12,
      attestationCount: 3,
      jailbreakDetected: false,
      deviceIntegrity: 'verified',
      firstSeenDays: 8,
      suspiciousEvents: 2,
    });
    expect(tokenDeviceContext({ ...subject, jailbreakDetected: true }, now).deviceIntegrity).toBe('compromised');
    expect(tokenDeviceContext({ ...subject, environment: 'development' }, now).deviceIntegrity).toBe('development');
  });
});
