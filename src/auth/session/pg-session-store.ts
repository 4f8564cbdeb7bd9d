import session from 'express-session';
import type { DataSource } from 'typeorm';

type Callback<T = void> = (error?: unknown, value?: T) => void;

/**
 * express-session store on the service's PostgreSQL, so every instance sees every session.
 * The user id is kept in its own column so all of a user's sessions can be destroyed at once
 * (password reset, account deletion).
 */
export class PgSessionStore extends session.Store {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  override get(sid: string, callback: Callback<session.SessionData | null>): void {
    this.dataSource
      .query(`SELECT data FROM sessions WHERE sid = $1 AND expires_at > now()`, [sid])
      .then((rows: { data: session.SessionData }[]) => callback(undefined, rows[0]?.data ?? null))
      .catch((error: unknown) => callback(error));
  }

  override set(sid: string, data: session.SessionData, callback?: Callback): void {
    const record: Partial<session.SessionData> = data;
    this.dataSource
      .query(
        `INSERT INTO sessions (sid, user_id, data, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (sid) DO UPDATE SET user_id = EXCLUDED.user_id, data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`,
        [sid, record.userId ?? null, JSON.stringify(data), expiry(data)],
      )
      .then(() => callback?.())
      .catch((error: unknown) => callback?.(error));
  }

  override destroy(sid: string, callback?: Callback): void {
    this.dataSource
      .query(`DELETE FROM sessions WHERE sid = $1`, [sid])
      .then(() => callback?.())
      .catch((error: unknown) => callback?.(error));
  }

  override touch(sid: string, data: session.SessionData, callback?: Callback): void {
    this.dataSource
      .query(`UPDATE sessions SET expires_at = $2 WHERE sid = $1`, [sid, expiry(data)])
      .then(() => callback?.())
      .catch((error: unknown) => callback?.(error));
  }
}

function expiry(data: session.SessionData): Date {
  return data.cookie.expires ? new Date(data.cookie.expires) : new Date(Date.now() + 86_400_000);
}
