import session from 'express-session';
import type { SessionsRepository } from './sessions.repository.js';

type Callback<T = void> = (error?: unknown, value?: T) => void;

/**
 * express-session store on the service's PostgreSQL (through SessionsRepository), so every
 * instance sees every session.
 */
export class PgSessionStore extends session.Store {
  constructor(private readonly sessions: SessionsRepository) {
    super();
  }

  override get(sid: string, callback: Callback<session.SessionData | null>): void {
    this.sessions
      .find(sid)
      .then((data) => callback(undefined, data))
      .catch((error: unknown) => callback(error));
  }

  override set(sid: string, data: session.SessionData, callback?: Callback): void {
    const record: Partial<session.SessionData> = data;
    this.sessions
      .save(sid, record.userId ?? null, data, expiry(data))
      .then(() => callback?.())
      .catch((error: unknown) => callback?.(error));
  }

  override destroy(sid: string, callback?: Callback): void {
    this.sessions
      .delete(sid)
      .then(() => callback?.())
      .catch((error: unknown) => callback?.(error));
  }

  override touch(sid: string, data: session.SessionData, callback?: Callback): void {
    this.sessions
      .extend(sid, expiry(data))
      .then(() => callback?.())
      .catch((error: unknown) => callback?.(error));
  }
}

function expiry(data: session.SessionData): Date {
  return data.cookie.expires ? new Date(data.cookie.expires) : new Date(Date.now() + 86_400_000);
}
