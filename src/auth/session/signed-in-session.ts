import type { Request } from 'express';
import type { SessionData } from 'express-session';
import { regenerateSession, saveSession } from '../../common/http/session-cookie.js';
import { mergeSignIn, type SessionSignIn } from './session-admission.js';

/**
 * Starts the session of a sign-in: a new session id (a session fixed before sign-in is worthless),
 * the user, the organization it starts in, and how it was made. A browser whose session already
 * belonged to the same user keeps what that session was admitted to.
 */
export async function startSignedInSession(
  request: Request,
  userId: string,
  organizationId: string | null,
  signIn: SessionSignIn,
  extras: Partial<Pick<SessionData, 'deviceCsrfToken'>> = {},
): Promise<void> {
  const current = (request as Partial<Pick<Request, 'session'>>).session;
  const previous = current?.userId === userId ? current.signIn : undefined;
  await regenerateSession(request);
  request.session.userId = userId;
  request.session.organizationId = organizationId;
  request.session.signIn = mergeSignIn(previous, signIn);
  Object.assign(request.session, extras);
  await saveSession(request);
}
