import { Injectable } from '@nestjs/common';
import { trustOrganizationId, type OrganizationId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { ChangeRequestState } from './change-request-state.js';
import type { Environment } from './evaluation/flag-types.js';

/** What a change request carries: one kind per write that can change what a protected environment serves. */
export type Kind =
  'environment' | 'rollback' | 'schedule' | 'update' | 'deletion' | 'creation' | 'override' | 'override_removal';

export interface ChangeRequestRow {
  id: string;
  organization_id: OrganizationId;
  app_id: string;
  flag_id: string;
  flag_key: string;
  kind: Kind;
  environment: Environment | null;
  payload: Record<string, unknown>;
  before: unknown;
  base_version: number;
  /** As stored; `current_state` is the state as it stands (see STATE). */
  state: ChangeRequestState;
  current_state: ChangeRequestState;
  author_user_id: string | null;
  author_email: string | null;
  decided_by: string | null;
  decided_at: Date | null;
  applied_by: string | null;
  applied_at: Date | null;
  applied_version: number | null;
  created_at: Date;
}

/** A new (pending) change request's fields. */
export interface NewChangeRequest {
  appId: string | null;
  flagId: string;
  flagKey: string | null;
  kind: Kind;
  environment: Environment | null;
  payload: Record<string, unknown>;
  before: unknown;
  baseVersion: number;
  authorUserId: string | null;
  authorEmail: string | null;
}

/**
 * The state as it stands: a pending or approved request whose flag has changed since (or is gone)
 * is stale; so is a creation whose key has a flag again. Derived on every read, so it can never
 * lag behind the flag.
 */
const STATE = `CASE WHEN r.state IN ('pending', 'approved') AND CASE WHEN r.kind = 'creation'
    THEN EXISTS (SELECT 1 FROM feature_flags f WHERE f.app_id = r.app_id AND f.key = r.flag_key)
    ELSE NOT EXISTS (SELECT 1 FROM feature_flags f WHERE f.id = r.flag_id AND f.version = r.base_version) END
  THEN 'stale' ELSE r.state END`;
const SELECT = `SELECT r.*, ${STATE} AS current_state FROM feature_flag_change_requests r`;

const branded = (row: ChangeRequestRow): ChangeRequestRow => ({
  ...row,
  organization_id: trustOrganizationId(row.organization_id),
});

/** The owner of `feature_flag_change_requests`; every read derives the state as it stands. */
@Injectable()
export class ChangeRequestsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** The organization's requests (of one flag, in one state as it stands), newest first, at most 500. */
  async list(organizationId: OrganizationId, filter: { flagId?: string; state?: string }): Promise<ChangeRequestRow[]> {
    const rows = await this.uow.manager().query<ChangeRequestRow[]>(
      `SELECT * FROM (${SELECT} WHERE r.organization_id = $1 AND ($2::uuid IS NULL OR r.flag_id = $2::uuid)) c
        WHERE ($3::text IS NULL OR c.current_state = $3) ORDER BY c.created_at DESC, c.id LIMIT 500`,
      [organizationId, filter.flagId ?? null, filter.state ?? null],
    );
    return rows.map(branded);
  }

  /** The request, or null; `lock` holds its row FOR UPDATE until the unit of work ends. */
  async find(
    organizationId: OrganizationId,
    id: string,
    options: { lock?: boolean } = {},
  ): Promise<ChangeRequestRow | null> {
    const manager = this.uow.manager();
    if (options.lock) {
      const locked = await manager.query<{ id: string }[]>(
        `SELECT id FROM feature_flag_change_requests WHERE id = $1 AND organization_id = $2 FOR UPDATE`,
        [id, organizationId],
      );
      if (!locked[0]) return null;
    }
    const rows = await manager.query<ChangeRequestRow[]>(`${SELECT} WHERE r.id = $1 AND r.organization_id = $2`, [
      id,
      organizationId,
    ]);
    return rows[0] ? branded(rows[0]) : null;
  }

  async insert(organizationId: OrganizationId, request: NewChangeRequest): Promise<ChangeRequestRow> {
    const [created] = await this.uow.manager().query<ChangeRequestRow[]>(
      `INSERT INTO feature_flag_change_requests
         (organization_id, app_id, flag_id, flag_key, kind, environment, payload, before, base_version,
          author_user_id, author_email)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *, state AS current_state`,
      [
        organizationId,
        request.appId,
        request.flagId,
        request.flagKey,
        request.kind,
        request.environment,
        JSON.stringify(request.payload),
        JSON.stringify(request.before),
        request.baseVersion,
        request.authorUserId,
        request.authorEmail,
      ],
    );
    return branded(created);
  }

  /** Records an approval or a rejection by `decidedBy`. */
  async decide(organizationId: OrganizationId, id: string, state: 'approved' | 'rejected', decidedBy: string | null) {
    await this.uow.manager().query(
      `UPDATE feature_flag_change_requests SET state = $3, decided_by = $4, decided_at = now(), updated_at = now()
        WHERE id = $1 AND organization_id = $2`,
      [id, organizationId, state, decidedBy],
    );
  }

  /** Records the request as applied by `appliedBy`, as the flag's version `version`. */
  async markApplied(organizationId: OrganizationId, id: string, appliedBy: string | null, version: number) {
    await this.uow.manager().query(
      `UPDATE feature_flag_change_requests
          SET state = 'applied', applied_by = $3, applied_at = now(), applied_version = $4, updated_at = now()
        WHERE id = $1 AND organization_id = $2`,
      [id, organizationId, appliedBy, version],
    );
  }
}
