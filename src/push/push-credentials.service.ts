import { createPrivateKey } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { notFound, ValidationFailedException } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import { queryRows } from '../database/sql.js';
import type { PutPushCredentialsDto } from './push.dto.js';
import { PushKey } from './push-key.js';
import { AppsRepository } from '../apps/apps.repository.js';

interface CredentialsRow {
  key_id: string;
  team_id: string;
  environment: string;
  created_at: Date;
  updated_at: Date;
}

/** An app's APNs credentials; the private key is stored sealed and never shown again. */
@Injectable()
export class PushCredentialsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly pushKey: PushKey,
    private readonly apps: AppsRepository,
  ) {}

  async get(auth: OrgAuthContext, appId: string) {
    await this.apps.assertExists(auth.organizationId, appId);
    const rows = await this.dataSource.query<CredentialsRow[]>(
      `SELECT key_id, team_id, environment, created_at, updated_at FROM push_credentials WHERE app_id = $1`,
      [appId],
    );
    if (!rows[0]) throw notFound('Push credentials', { hint: 'PUT them first' });
    return toCredentialsResponse(rows[0]);
  }

  async put(auth: OrgAuthContext, appId: string, input: PutPushCredentialsDto) {
    const pem = input.privateKey.trim();
    let curve: string | undefined;
    try {
      const key = createPrivateKey({ key: pem, format: 'pem' });
      curve = key.asymmetricKeyType === 'ec' ? key.asymmetricKeyDetails?.namedCurve : undefined;
    } catch {
      curve = undefined;
    }
    if (curve !== 'prime256v1') {
      throw new ValidationFailedException([
        { field: 'privateKey', message: 'privateKey must be the contents of an APNs .p8 key (PEM, EC P-256)' },
      ]);
    }
    const sealed = (await this.pushKey.box()).seal(pem, appId);
    const row = await this.dataSource.transaction(async (manager) => {
      await this.apps.assertExists(auth.organizationId, appId, { manager });
      const [saved] = await manager.query<CredentialsRow[]>(
        `INSERT INTO push_credentials (app_id, organization_id, key_id, team_id, private_key_encrypted, environment)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (app_id) DO UPDATE SET key_id = EXCLUDED.key_id, team_id = EXCLUDED.team_id,
           private_key_encrypted = EXCLUDED.private_key_encrypted, environment = EXCLUDED.environment,
           updated_at = now()
         RETURNING key_id, team_id, environment, created_at, updated_at`,
        [appId, auth.organizationId, input.keyId, input.teamId, sealed, input.environment],
      );
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'push_credentials.updated',
          resourceType: 'app',
          resourceId: appId,
          metadata: { keyId: input.keyId, teamId: input.teamId, environment: input.environment },
        },
        manager,
      );
      return saved;
    });
    return toCredentialsResponse(row);
  }

  /** Without credentials, feedback and support notices stay in the stored inbox only. */
  async remove(auth: OrgAuthContext, appId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await this.apps.assertExists(auth.organizationId, appId, { manager });
      const deleted = await queryRows<{ app_id: string }>(
        manager,
        `DELETE FROM push_credentials WHERE app_id = $1 RETURNING app_id`,
        [appId],
      );
      if (!deleted[0]) throw notFound('Push credentials');
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'push_credentials.deleted',
          resourceType: 'app',
          resourceId: appId,
        },
        manager,
      );
    });
  }
}

function toCredentialsResponse(row: CredentialsRow) {
  return {
    keyId: row.key_id,
    teamId: row.team_id,
    environment: row.environment,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
