import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import {
  ContributesTokenClaims,
  type TokenClaimsContributor,
  type TokenSubject,
} from '../device-tokens/token.service.js';
import { SubscriptionClaims } from '../entitlements/subscription-claims.js';
import { createLogger } from '../common/logging/logger.js';
import { tierDefinition, type TierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ClaimDefinitionsCache } from './claim-definitions-cache.js';
import { evaluateClaims, ExternalClaimFetcher, type ClaimDefinition, type DeviceContext } from './engine/index.js';
import { integrityVerdict } from './preview-device.js';

const DAY_MS = 24 * 3600 * 1000;

/** What the engine sees of the device a token is minted for. */
export function tokenDeviceContext(subject: TokenSubject, now: number = Date.now()): DeviceContext {
  return {
    keyId: subject.keyId,
    deviceModel: subject.deviceModel ?? undefined,
    osVersion: subject.osVersion ?? undefined,
    appVersion: subject.appVersion ?? undefined,
    country: subject.country ?? undefined,
    riskScore: subject.riskScore,
    attestationCount: subject.attestationCount,
    jailbreakDetected: subject.jailbreakDetected,
    deviceIntegrity: integrityVerdict(subject.jailbreakDetected, subject.environment),
    firstSeenDays: Math.max(0, Math.floor((now - subject.firstSeenAt.getTime()) / DAY_MS)),
    suspiciousEvents: subject.failureCount,
  };
}

/**
 * The claims the organization's current plan admits, in evaluation order: types the plan
 * offers, and no more than its active-claim limit (after a downgrade, the first ones by
 * priority keep working).
 */
export function claimsWithinTier(definitions: readonly ClaimDefinition[], tier: TierDefinition): ClaimDefinition[] {
  const allowed = new Set<string>([...tier.allowedFormClaimTypes, ...(tier.externalClaims ? ['external'] : [])]);
  return definitions
    .filter((claim) => claim.isActive && allowed.has(claim.claimType))
    .sort((a, b) => a.priority - b.priority || (a.claimKey < b.claimKey ? -1 : a.claimKey > b.claimKey ? 1 : 0))
    .slice(0, tier.limits.maxCustomClaims);
}

/**
 * Puts every active custom claim of the organization into each token. A claim that fails is
 * left out and logged; it never fails the token.
 */
@Injectable()
@ContributesTokenClaims()
export class ClaimsTokenContributor implements TokenClaimsContributor {
  private readonly logger: Logger;

  constructor(
    private readonly definitions: ClaimDefinitionsCache,
    private readonly fetcher: ExternalClaimFetcher,
    private readonly subscriptions: SubscriptionClaims,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.logger = createLogger(config).child({ component: 'claims' });
  }

  async customClaims(subject: TokenSubject): Promise<Record<string, unknown>> {
    const started = performance.now();
    const { organizationId, appId, serviceTier } = subject.tenant;
    const claims = claimsWithinTier(
      await this.definitions.activeDefinitions(subject.tenant),
      tierDefinition(serviceTier),
    );
    if (claims.length === 0) return {};
    const evaluation = await evaluateClaims(claims, tokenDeviceContext(subject), { fetcher: this.fetcher });
    for (const result of evaluation.results) {
      if (!result.errors) continue;
      this.logger.warn(
        { organizationId, appId, keyId: subject.keyId, claimKey: result.claimKey, errors: result.errors },
        'custom claim left out of the token',
      );
    }
    this.logger.debug(
      {
        organizationId,
        appId,
        evaluationTime: Math.round((performance.now() - started) * 1000) / 1000,
        claims: evaluation.results.map(({ claimKey, evaluationTime }) => ({ claimKey, evaluationTime })),
      },
      'custom claims evaluated',
    );
    return evaluation.claims;
  }

  /** The reserved `subscription` claim, from the entitlements ingested for the device's subject. */
  subscriptionClaim(subject: TokenSubject): Promise<Record<string, unknown>> {
    return this.subscriptions.claimFor(subject.tenant.organizationId, subject.subjectId);
  }
}
