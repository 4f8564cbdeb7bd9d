import { Injectable } from '@nestjs/common';
import { trustOrganizationId, type OrganizationId } from '../../common/access/tenant-id.js';
import { queryRows } from '../../database/sql.js';
import { UnitOfWork } from '../../database/unit-of-work.js';

export type CliSessionState = 'pending' | 'approved' | 'active' | 'denied';

/** A CLI login session as its flow reads it, found by the hash of its id (the client's secret). */
export interface CliSessionRecord {
  status: CliSessionState;
  userId: string | null;
  organizationId: OrganizationId | null;
  expiresAt: Date;
  expired: boolean;
  /** The code the CLI shows in the terminal (null for sessions created before codes existed). */
  userCode: string | null;
}

interface CliSessionRow {
  status: CliSessionState;
  user_id: string | null;
  organization_id: string | null;
  expires_at: Date;
  expired: boolean;
  user_code: string | null;
}

/** The owner of `cli_sessions`, the command-line client's device-code logins (decision 0070). */
@Injectable()
export class CliSessionsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  async insert(idHash: string, userCode: string, ttlSeconds: number): Promise<void> {
    await this.uow
      .manager()
      .query(
        `INSERT INTO cli_sessions (id_hash, user_code, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
        [idHash, userCode, ttlSeconds],
      );
  }

  /** The session; `lock` holds its row until the unit of work ends. */
  async find(idHash: string, options: { lock?: boolean } = {}): Promise<CliSessionRecord | null> {
    const [row] = await queryRows<CliSessionRow>(
      this.uow.manager(),
      `SELECT status, user_id, organization_id, expires_at, expires_at <= now() AS expired, user_code
         FROM cli_sessions WHERE id_hash = $1 ${options.lock ? 'FOR UPDATE' : ''}`,
      [idHash],
    );
    return row
      ? {
          status: row.status,
          userId: row.user_id,
          organizationId: row.organization_id === null ? null : trustOrganizationId(row.organization_id),
          expiresAt: new Date(row.expires_at),
          expired: row.expired,
          userCode: row.user_code,
        }
      : null;
  }

  /** The signed-in user's decision, for their organization. */
  async decide(
    organizationId: OrganizationId,
    idHash: string,
    status: 'approved' | 'denied',
    userId: string | null,
  ): Promise<void> {
    await this.uow
      .manager()
      .query(`UPDATE cli_sessions SET status = $2, user_id = $3, organization_id = $4 WHERE id_hash = $1`, [
        idHash,
        status,
        userId,
        organizationId,
      ]);
  }

  /** The approved session got its key. */
  async activate(organizationId: OrganizationId, idHash: string, apiKeyId: string): Promise<void> {
    await this.uow
      .manager()
      .query(`UPDATE cli_sessions SET status = 'active', api_key_id = $3 WHERE id_hash = $1 AND organization_id = $2`, [
        idHash,
        organizationId,
        apiKeyId,
      ]);
  }
}
