import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
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
import { queryRows } from '../database/sql.js';
import { DenySet, announceRevocation } from '../devices/deny-set.js';
import { DevicesRepository } from '../devices/devices.repository.js';
import type { CreateDebugTokenDto, DebugAttestationDto } from './debug-tokens.dto.js';
import { debugSubject } from '../devices/debug-subject.js';
import { TokenService, type MintedToken } from '../device-tokens/token.service.js';
import { appDebugTokensEnabled, AppsRepository } from '../apps/apps.repository.js';

/** Live (unrevoked, unexpired) debug tokens an app may hold at once. */
export const MAX_LIVE_DEBUG_TOKENS = 20;

const PREFIX_LENGTH = 12;

interface DebugTokenRow {
  id: string;
  name: string;
  prefix: string;
  created_by: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, name, prefix, created_by, expires_at, revoked_at, last_used_at, created_at';

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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly tokens: TokenService,
    private readonly denySet: DenySet,
    private readonly devices: DevicesRepository,
    private readonly apps: AppsRepository,
  ) {}

  /** The app's unrevoked debug tokens (expired ones included, marked by `expiresAt`), newest first. */
  async list(auth: OrgAuthContext, appId: string) {
    await this.apps.assertExists(auth.organizationId, appId);
    const rows = await this.dataSource.query<DebugTokenRow[]>(
      `SELECT ${COLUMNS} FROM debug_tokens
        WHERE organization_id = $1 AND app_id = $2 AND revoked_at IS NULL
        ORDER BY created_at DESC, id DESC`,
      [auth.organizationId, appId],
    );
    return rows.map(toDebugTokenResponse);
  }

  /** The secret is in this answer only. The app row lock makes the live-token limit race-safe. */
  async create(auth: OrgAuthContext, appId: string, input: CreateDebugTokenDto) {
    const secret = `dbg_${randomSecret(32)}`;
    const row = await this.dataSource.transaction(async (manager) => {
      await this.apps.assertExists(auth.organizationId, appId, { manager, lock: true });
      const [{ live }] = await manager.query<{ live: number }[]>(
        `SELECT count(*)::int AS live FROM debug_tokens
          WHERE app_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
        [appId],
      );
      if (live >= MAX_LIVE_DEBUG_TOKENS) {
        throw debugTokenLimitReached(MAX_LIVE_DEBUG_TOKENS);
      }
      const [created] = await manager.query<DebugTokenRow[]>(
        `INSERT INTO debug_tokens (organization_id, app_id, name, prefix, token_hash, created_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
        [
          auth.organizationId,
          appId,
          input.name,
          secret.slice(0, PREFIX_LENGTH),
          sha256Hex(secret),
          auth.caller.userId,
          input.expiresAt ?? null,
        ],
      );
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'debug_token.created',
          resourceType: 'debug_token',
          resourceId: created.id,
          metadata: { appId, name: created.name, prefix: created.prefix, expiresAt: created.expires_at },
        },
        manager,
      );
      return created;
    });
    return { ...toDebugTokenResponse(row), token: secret };
  }

  /** Takes effect at once on every instance, for exchanges and for the device tokens already minted (DenySet). */
  async revoke(auth: OrgAuthContext, appId: string, tokenId: string): Promise<void> {
    const revoked = await this.dataSource.transaction(async (manager) => {
      await this.apps.assertExists(auth.organizationId, appId, { manager });
      // Revoking twice is a no-op: the first revocation's time stays, and only it is audited.
      const rows = await queryRows<DebugTokenRow & { newly: boolean }>(
        manager,
        `UPDATE debug_tokens SET revoked_at = COALESCE(revoked_at, now())
          WHERE id = $1 AND app_id = $2 AND organization_id = $3
          RETURNING ${COLUMNS}, revoked_at = now() AS newly`,
        [tokenId, appId, auth.organizationId],
      );
      const row = rows[0];
      if (!row) throw notFound('Debug token');
      // Every instance refuses the device tokens it minted once this commits. One never exchanged
      // minted none, and cannot be any more (the exchange records its use only while unrevoked):
      // nothing to announce, and no instance holds it (decision 0065).
      if (row.last_used_at) await announceRevocation(manager, { kind: 'debugToken', appId, tokenId: row.id });
      if (row.newly) {
        await this.audit.record(
          auth,
          {
            organizationId: auth.organizationId,
            action: 'debug_token.revoked',
            resourceType: 'debug_token',
            resourceId: row.id,
            metadata: { appId, name: row.name, prefix: row.prefix },
          },
          manager,
        );
      }
      return row;
    });
    if (revoked.last_used_at) this.denySet.noteRevokedDebugToken(appId, revoked.id);
  }

  /** POST /api/v1/attestation/debug: the secret must belong to the app the identity headers name. */
  async exchange(tenant: Tenant, input: DebugAttestationDto): Promise<MintedToken> {
    const rows = await this.dataSource.query<
      { id: string; app_id: string; expires_at: Date | null; revoked_at: Date | null; enabled: boolean }[]
    >(
      `SELECT d.id, d.app_id, d.expires_at, d.revoked_at, ${appDebugTokensEnabled('d.app_id')} AS enabled
         FROM debug_tokens d WHERE d.token_hash = $1`,
      [sha256Hex(input.debugToken)],
    );
    const row = rows[0];
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
      queryRows<{ id: string }>(
        this.dataSource,
        `UPDATE debug_tokens SET last_used_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id`,
        [row.id],
      ),
      this.devices.recordDebugExchange(tenant.organizationId, tenant.appId, subject),
    ]);
    if (!used.length) throw debugTokenRevoked();
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
