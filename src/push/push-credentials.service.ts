import { createPrivateKey } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { notFound, ValidationFailedException } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { PutPushCredentialsDto } from './push.dto.js';
import { PushCredentialsRepository, type PushCredentialsRow } from './push-credentials.repository.js';
import { PushKey } from './push-key.js';
import { AppsRepository } from '../apps/apps.repository.js';

/** An app's APNs credentials; the private key is stored sealed and never shown again. */
@Injectable()
export class PushCredentialsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly credentials: PushCredentialsRepository,
    private readonly audit: AuditService,
    private readonly pushKey: PushKey,
    private readonly apps: AppsRepository,
  ) {}

  async get(auth: OrgAuthContext, appId: string) {
    await this.apps.assertExists(auth.organizationId, appId);
    const row = await this.credentials.find(auth.organizationId, appId);
    if (!row) throw notFound('Push credentials', { hint: 'PUT them first' });
    return toCredentialsResponse(row);
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
    const sealedKey = (await this.pushKey.box()).seal(pem, appId);
    const row = await this.uow.run(async () => {
      await this.apps.assertExists(auth.organizationId, appId);
      const saved = await this.credentials.upsert(auth.organizationId, appId, {
        keyId: input.keyId,
        teamId: input.teamId,
        sealedKey,
        environment: input.environment,
      });
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'push_credentials.updated',
        resourceType: 'app',
        resourceId: appId,
        metadata: { keyId: input.keyId, teamId: input.teamId, environment: input.environment },
      });
      return saved;
    });
    return toCredentialsResponse(row);
  }

  /** Without credentials, feedback and support notices stay in the stored inbox only. */
  async remove(auth: OrgAuthContext, appId: string): Promise<void> {
    await this.uow.run(async () => {
      await this.apps.assertExists(auth.organizationId, appId);
      if (!(await this.credentials.remove(auth.organizationId, appId))) throw notFound('Push credentials');
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'push_credentials.deleted',
        resourceType: 'app',
        resourceId: appId,
      });
    });
  }
}

function toCredentialsResponse(row: PushCredentialsRow) {
  return {
    keyId: row.key_id,
    teamId: row.team_id,
    environment: row.environment,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
