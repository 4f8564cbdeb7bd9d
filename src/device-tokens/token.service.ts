import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { discovered } from '../common/discovery/discovered.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { signRs256Jwt } from './rs256-signer.js';
import { SigningKeysService } from './signing-keys.service.js';
import { SERVICE_SET_CLAIMS } from './token-claims.js';

export const DEFAULT_TOKEN_LIFETIME_SECONDS = 3600;

/** What the token is minted about: the device after a successful validate or refresh. */
export interface TokenSubject {
  tenant: Tenant;
  keyId: string;
  environment: 'development' | 'production';
  riskScore: number;
  attestationCount: number;
  deviceModel: string | null;
  osVersion: string | null;
  appVersion: string | null;
  country: string | null;
  jailbreakDetected: boolean;
  firstSeenAt: Date;
  failureCount: number;
  subjectId: string | null;
}

/**
 * The seam through which custom claims and the reserved `subscription` claim reach the token.
 * The claims module marks its implementation `@ContributesTokenClaims()`, found when this module
 * starts, so this feature does not depend on it; without one a token carries the base claims and
 * `subscription: { status: 'none' }`. Two contributors fail the start.
 */
export interface TokenClaimsContributor {
  customClaims(subject: TokenSubject): Promise<Record<string, unknown>>;
  subscriptionClaim(subject: TokenSubject): Promise<Record<string, unknown>>;
}

/** Marks the provider whose claims go into every token minted (a `TokenClaimsContributor`). */
export const ContributesTokenClaims = DiscoveryService.createDecorator<void>();

/** How a token departs from the app's defaults. */
export interface MintOptions {
  /** Minted for a debug token (Simulator, CI), not an attested key: `env: "debug"`, `debug: true`. */
  readonly debug?: boolean;
  /** A short-lived token a backend may consume once (`limited_use: true`, LIMITED_USE_LIFETIME_SECONDS). */
  readonly limitedUse?: boolean;
  /** The token expires no later than this (a debug token's own expiry). */
  readonly notAfter?: Date | null;
}

/** Lifetime of a limited-use token, as Firebase App Check's limited-use tokens. */
export const LIMITED_USE_LIFETIME_SECONDS = 300;

export interface MintedToken {
  token: string;
  tokenType: 'Bearer';
  expiresAt: string;
  riskScore: number;
}

@Injectable()
export class TokenService implements OnModuleInit {
  constructor(
    private readonly keys: SigningKeysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
  ) {}

  private contributor: TokenClaimsContributor | null = null;

  onModuleInit(): void {
    const contributors = discovered<TokenClaimsContributor, void>(this.discovery, ContributesTokenClaims);
    if (contributors.length > 1) throw new Error('More than one provider contributes token claims');
    this.contributor = contributors[0]?.instance ?? null;
  }

  async mint(subject: TokenSubject, options: MintOptions = {}): Promise<MintedToken> {
    const { tenant } = subject;
    const jwt = tenant.jwtConfiguration;
    const issuedAt = Math.floor(Date.now() / 1000);
    let lifetime = options.limitedUse
      ? LIMITED_USE_LIFETIME_SECONDS
      : (jwt.overrideExpirationTime ?? DEFAULT_TOKEN_LIFETIME_SECONDS);
    if (options.notAfter) lifetime = Math.min(lifetime, Math.floor(options.notAfter.getTime() / 1000) - issuedAt);
    const [custom, subscription, key] = await Promise.all([
      this.contributor?.customClaims(subject) ?? Promise.resolve({}),
      this.contributor?.subscriptionClaim(subject) ?? Promise.resolve({ status: 'none' }),
      this.keys.signingKey(),
    ]);
    const claims: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(custom)) if (!SERVICE_SET_CLAIMS.has(name)) claims[name] = value;
    Object.assign(claims, {
      org_id: tenant.organizationId,
      app_id: tenant.appId,
      env: options.debug ? 'debug' : subject.environment,
      ...(options.debug ? { debug: true } : {}),
      ...(options.limitedUse ? { limited_use: true } : {}),
      risk_score: subject.riskScore,
      subscription,
      // An Android-only app has no Bundle ID and Team ID: the claims are left out, not null.
      ...(jwt.includeAppMetadata
        ? {
            ...(tenant.bundleId !== null ? { bundle_id: tenant.bundleId, team_id: tenant.teamId } : {}),
            app_name: tenant.appName,
          }
        : {}),
    });
    // The payload in the order jsonwebtoken (through @nestjs/jwt, which verifies these tokens)
    // writes it: the claims, iat and exp, then aud, iss, sub and jti.
    const token = await signRs256Jwt(
      key.kid,
      {
        ...claims,
        iat: issuedAt,
        exp: issuedAt + lifetime,
        // The Bundle ID, else (an Android-only app) the package name the device was attested under.
        aud: jwt.customAudience ?? tenant.bundleId ?? tenant.packageName ?? tenant.appId,
        iss: jwt.customIssuer ?? this.config.baseUrl,
        sub: subject.keyId,
        jti: randomUUID(),
      },
      key.privateKey,
    );
    return {
      token,
      tokenType: 'Bearer',
      expiresAt: new Date((issuedAt + lifetime) * 1000).toISOString(),
      riskScore: subject.riskScore,
    };
  }
}
