import { Injectable } from '@nestjs/common';
import type { SessionData } from 'express-session';
import { queryRows } from '../../database/sql.js';
import { UnitOfWork } from '../../database/unit-of-work.js';

/**
 * The owner of `sessions`, the dashboard's express-session rows (decision 0070). The user id is
 * kept in its own column so all of a user's sessions end at once (password reset, deactivation);
 * those deletions join the open unit of work, so they commit with the change that asks for them.
 */
@Injectable()
export class SessionsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** The data of an unexpired session, or null. */
  async find(sid: string): Promise<SessionData | null> {
    const [row] = await queryRows<{ data: SessionData }>(
      this.uow.manager(),
      `SELECT data FROM sessions WHERE sid = $1 AND expires_at > now()`,
      [sid],
    );
    return row?.data ?? null;
  }

  async save(sid: string, userId: string | null, data: SessionData, expiresAt: Date): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO sessions (sid, user_id, data, expires_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (sid) DO UPDATE SET user_id = EXCLUDED.user_id, data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`,
      [sid, userId, JSON.stringify(data), expiresAt],
    );
  }

  async delete(sid: string): Promise<void> {
    await this.uow.manager().query(`DELETE FROM sessions WHERE sid = $1`, [sid]);
  }

  async extend(sid: string, expiresAt: Date): Promise<void> {
    await this.uow.manager().query(`UPDATE sessions SET expires_at = $2 WHERE sid = $1`, [sid, expiresAt]);
  }

  /** Ends every session of the users. */
  async deleteForUsers(userIds: readonly string[]): Promise<void> {
    await this.uow.manager().query(`DELETE FROM sessions WHERE user_id = ANY($1::uuid[])`, [userIds]);
  }
}
