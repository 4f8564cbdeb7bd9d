import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { randomSecret, sha256Hex } from '../common/crypto.js';
import { notFound } from '../common/errors/app-exception.js';
import {
  debugTokenExpired,
  debugTokenInvalid,
  debugTokenLimitReached,
  debugTokenRevoked,
  debugTokensDisabled,
} from './attestation.exceptions.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { AuditService } from '../audit/audit.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { DenySet } from '../devices/deny-set.js';
import { DevicesRepository } from '../devices/devices.repository.js';
import { TokenRevocationsRepository } from '../devices/token-revocations.repository.js';
import type { CreateDebugTokenDto, DebugAttestationDto } from './debug-tokens.dto.js';
import { debugSubject } from '../devices/debug-subject.js';
import { TokenService, type MintedToken } from '../device-tokens/token.service.js';
import { AppsRepository } from '../apps/apps.repository.js';
import { DebugTokensRepository, type DebugTokenRow } from './debug-tokens.repository.js';

/** Live (unrevoked, unexpired) debug tokens an app may hold at once. */
export const MAX_LIVE_DEBUG_TOKENS = 20;

const PREFIX_LENGTH = 12;

/**
 * Debug tokens let a Simulator or CI build, which cannot use App Attest, obtain a device token
 * marked `env: "debug"`, `debug: true`: the app's backend decides what such devices may do.
 * The secret is shown once and stored as its SHA-256. An exchange creates no device record, is
 * never counted as a monthly active device and fires no device webhooks; it leaves one device
 * event marked debug. The token's `sub` is `debug:<tokenId>` (with `:<deviceId>` when the build
 * sends one), so revoking the debug token also refuses the device tokens it minted
 * (DenySet).
 */
@Injectable()
export class DebugTokensService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly debugTokens: DebugTokensRepository,
    private readonly revocations: TokenRevocationsRepository,
    private readonly audit: AuditService,
    private readonly tokens: TokenService,
    private readonly denySet: DenySet,
    private readonly devices: DevicesRepository,
    private readonly apps: AppsRepository,
  ) {}

  /** The app's unrevoked debug tokens (expired ones included, marked by `expiresAt`), newest first. */
  async list(auth: OrgAuthContext, appId: string) {
    await this.apps.assertExists(auth.organizationId, appId);
    const rows = await this.debugTokens.listUnrevoked(auth.organizationId, appId);
    return rows.map(toDebugTokenResponse);
  }

  /** The secret is in this answer only. The app row lock makes the live-token limit race-safe. */
  async create(auth: OrgAuthContext, appId: string, input: CreateDebugTokenDto) {
    const secret = `dbg_${randomSecret(32)}`;
    const row = await this.uow.run(async () => {
      await this.apps.assertExists(auth.organizationId, appId, { lock: true });
      const live = await this.debugTokens.countLive(auth.organizationId, appId);
      if (live >= MAX_LIVE_DEBUG_TOKENS) {
        throw debugTokenLimitReached(MAX_LIVE_DEBUG_TOKENS);
      }
      const created = await this.debugTokens.insert(auth.organizationId, appId, {
        name: input.name,
        prefix: secret.slice(0, PREFIX_LENGTH),
        hash: sha256Hex(secret),
        createdBy: auth.caller.userId,
        expiresAt: input.expiresAt ?? null,
      });
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'debug_token.created',
        resourceType: 'debug_token',
        resourceId: created.id,
        metadata: { appId, name: created.name, prefix: created.prefix, expiresAt: created.expires_at },
      });
      return created;
    });
    return { ...toDebugTokenResponse(row), token: secret };
  }

  /** Takes effect at once on every instance, for exchanges and for the device tokens already minted (DenySet). */
  async revoke(auth: OrgAuthContext, appId: string, tokenId: string): Promise<void> {
    const revoked = await this.uow.run(async () => {
      await this.apps.assertExists(auth.organizationId, appId);
      // Revoking twice is a no-op: the first revocation's time stays, and only it is audited.
      const row = await this.debugTokens.revoke(auth.organizationId, appId, tokenId);
      if (!row) throw notFound('Debug token');
      // Every instance refuses the device tokens it minted once this commits. One never exchanged
      // minted none, and cannot be any more (the exchange records its use only while unrevoked):
      // nothing to announce, and no instance holds it (decision 0065).
      if (row.last_used_at) await this.revocations.announce({ kind: 'debugToken', appId, tokenId: row.id });
      if (row.newly) {
        await this.audit.record(auth, {
          organizationId: auth.organizationId,
          action: 'debug_token.revoked',
          resourceType: 'debug_token',
          resourceId: row.id,
          metadata: { appId, name: row.name, prefix: row.prefix },
        });
      }
      return row;
    });
    if (revoked.last_used_at) this.denySet.noteRevokedDebugToken(appId, revoked.id);
  }

  /** POST /api/v1/attestation/debug: the secret must belong to the app the identity headers name. */
  async exchange(tenant: Tenant, input: DebugAttestationDto): Promise<MintedToken> {
    const row = await this.debugTokens.byHash(sha256Hex(input.debugToken));
    if (!row || row.app_id !== tenant.appId) {
      throw debugTokenInvalid();
    }
    if (!row.enabled) {
      throw debugTokensDisabled();
    }
    if (row.revoked_at) {
      throw debugTokenRevoked();
    }
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) {
      throw debugTokenExpired();
    }
    const subject = debugSubject(row.id, input.deviceId);
    // Two statements on two connections at once: the token's use here, its event in the devices' log.
    // The use is recorded only while the token is unrevoked (a revocation committed since the read
    // above wins): a token minted here was recorded used before any revocation, which is what puts
    // a revoked debug token in the deny set (decision 0065).
    const [used] = await Promise.all([
      this.debugTokens.markUsed(tenant.appId, row.id),
      this.devices.recordDebugExchange(tenant.organizationId, tenant.appId, subject),
    ]);
    if (!used) throw debugTokenRevoked();
    return this.tokens.mint(
      {
        tenant,
        keyId: subject,
        environment: 'development',
        riskScore: 0,
        attestationCount: 0,
        deviceModel: null,
        osVersion: null,
        appVersion: null,
        country: null,
        jailbreakDetected: false,
        firstSeenAt: new Date(),
        failureCount: 0,
        subjectId: null,
      },
      { debug: true, limitedUse: input.limitedUse === true, notAfter: row.expires_at },
    );
  }
}

function toDebugTokenResponse(row: DebugTokenRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
  };
}
