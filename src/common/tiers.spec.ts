import { describe, expect, it } from '@jest/globals';
import { entitlementsOf, nextTier, planAllows, tierDefinition, tierOf } from './tiers.js';

describe('tier table', () => {
  it('states the documented limits per tier', () => {
    expect(['free', 'basic', 'professional', 'enterprise'].map((t) => tierDefinition(t).limits.maxMAD)).toEqual([
      1_000,
      25_000,
      250_000,
      null,
    ]);
    expect(['free', 'basic', 'professional', 'enterprise'].map((t) => tierDefinition(t).limits.maxSeats)).toEqual([
      1, 3, 10, 50,
    ]);
    expect(['free', 'basic', 'professional', 'enterprise'].map((t) => tierDefinition(t).limits.maxApps)).toEqual([
      2,
      3,
      10,
      null,
    ]);
    expect(
      ['free', 'basic', 'professional', 'enterprise'].map((t) => tierDefinition(t).limits.maxCustomClaims),
    ).toEqual([1, 5, 10, 20]);
    expect(tierDefinition('free').rates).toEqual({ attest: 30, challenge: 60, flags: 120, apikey: 30 });
    expect(tierDefinition('enterprise').rates).toEqual({
      attest: 10_000,
      challenge: 20_000,
      flags: 40_000,
      apikey: 5_000,
    });
  });

  it('shows the Business values the interface document states', () => {
    const { limits, tierDisplay } = entitlementsOf('professional');
    expect(tierDisplay).toBe('Business');
    expect(limits).toMatchObject({
      maxEnvironments: 10,
      maxRulesPerFlag: 20,
      analyticsRetentionDays: 90,
      rateLimit: 200,
      maxWebhooks: 10,
    });
  });

  it('unlocks features cumulatively', () => {
    expect(entitlementsOf('free').features).toMatchObject({ customClaims: true, webhooks: false, sseRealTime: false });
    expect(entitlementsOf('basic').features).toMatchObject({
      webhooks: true,
      percentRollout: true,
      sseRealTime: false,
    });
    expect(entitlementsOf('professional').features).toMatchObject({ sseRealTime: true, sso: false });
    expect(entitlementsOf('enterprise').features).toMatchObject({ sso: true, approvalWorkflows: true });
    expect(entitlementsOf('free').features.allowedFormClaimTypes).toEqual(['static']);
  });

  it('maps legacy raw values to the nearest tier and keeps the raw value visible', () => {
    expect(tierOf('growth')).toBe('basic');
    expect(tierOf('enterprise_plus')).toBe('enterprise');
    expect(entitlementsOf('growth')).toMatchObject({ tier: 'growth', limits: { maxSeats: 3 } });
    expect(nextTier('free')?.display).toBe('Pro');
    expect(nextTier('enterprise_plus')).toBeNull();
  });
});

describe('plan rules', () => {
  it('allows the admin:team scope on Enterprise (and the legacy Enterprise Plus) only', () => {
    expect(
      ['free', 'basic', 'growth', 'professional', 'enterprise', 'enterprise_plus', 'unknown'].filter((raw) =>
        planAllows(raw, 'adminTeamScope'),
      ),
    ).toEqual(['enterprise', 'enterprise_plus']);
  });
});
