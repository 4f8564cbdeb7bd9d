import { createHmac } from 'node:crypto';
import { randomSecret, safeEqual } from '../common/crypto.js';

/**
 * Device cookies (OWASP, "Slow down online guessing attacks with device cookies"): a browser that
 * signed in to an account successfully is given a token naming that account, HMAC-signed with a
 * key derived from the session secret. A later sign-in to the same account from that browser is
 * judged by the token's own failure budget instead of the account's, so whoever exhausts the
 * account's budget from elsewhere cannot keep its owner out. Pure: no framework, no storage.
 */
export const DEVICE_COOKIE = 'attestly.device';

/** How long a token proves a past sign-in; every successful sign-in issues a fresh one. */
export const DEVICE_COOKIE_MAX_AGE_MS = 90 * 24 * 60 * 60 * 1000;

/** Accounts one browser is remembered for (a shared computer): the most recent sign-ins win. */
export const DEVICE_COOKIE_MAX_ACCOUNTS = 5;

const CONTEXT = 'attestly-device-cookie-v1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NONCE = /^[A-Za-z0-9_-]{22}$/;
const SECONDS = /^[0-9]{1,12}$/;

export interface DeviceToken {
  /** The account this browser signed in to. */
  readonly userId: string;
  /** Names this token's failure budget. */
  readonly nonce: string;
  /** Unix seconds of the sign-in that issued it. */
  readonly issuedAt: number;
}

/** The signing key of device tokens, kept apart from the session cookie's own use of the secret. */
export function deviceCookieKey(sessionSecret: string): Buffer {
  return createHmac('sha256', sessionSecret).update(CONTEXT).digest();
}

/**
 * The key of one account's device tokens, bound to its current password hash: a password reset or
 * change ends every token issued before it, so a cookie outlives no credential (decision 0066).
 */
export function accountDeviceKey(key: Buffer, credential: string): Buffer {
  return createHmac('sha256', key).update(`credential\n${credential}`).digest();
}

function mac(key: Buffer, userId: string, nonce: string, issuedAt: number): string {
  return createHmac('sha256', key).update(`${CONTEXT}\n${userId}\n${nonce}\n${issuedAt}`).digest('base64url');
}

/** A new token for `userId`, as it is written in the cookie. */
export function issueDeviceToken(key: Buffer, userId: string, now: Date): string {
  const nonce = randomSecret(16);
  const issuedAt = Math.floor(now.getTime() / 1000);
  return `${userId}.${nonce}.${issuedAt}.${mac(key, userId, nonce, issuedAt)}`;
}

/** One token of the cookie, or null when it is malformed, forged, from the future or too old. */
export function readDeviceToken(key: Buffer, text: string, now: Date): DeviceToken | null {
  const token = unsignedToken(text, now);
  if (!token || !safeEqual(token.signature, mac(key, token.userId, token.nonce, token.issuedAt))) return null;
  return { userId: token.userId, nonce: token.nonce, issuedAt: token.issuedAt };
}

/** A well-formed token within its age, its signature not yet checked (it needs its account's key). */
function unsignedToken(text: string, now: Date): (DeviceToken & { signature: string }) | null {
  const [userId, nonce, issued, signature, ...rest] = text.split('.');
  if (rest.length || !UUID.test(userId ?? '') || !NONCE.test(nonce ?? '') || !SECONDS.test(issued ?? '')) return null;
  const issuedAt = Number(issued);
  const ageMs = now.getTime() - issuedAt * 1000;
  if (ageMs < -60_000 || ageMs >= DEVICE_COOKIE_MAX_AGE_MS) return null;
  return { userId, nonce, issuedAt, signature: signature ?? '' };
}

/** The valid token the cookie holds for `userId`, if any. */
export function deviceTokenFor(
  key: Buffer,
  cookieValue: string | undefined,
  userId: string,
  now: Date,
): DeviceToken | null {
  // Which account a verified token names is no secret: a plain comparison of ids.
  return (
    tokensOf(cookieValue)
      .map((text) => readDeviceToken(key, text, now))
      .find((read): read is DeviceToken => read?.userId === userId) ?? null
  );
}

/**
 * The cookie after a successful sign-in to `userId`: a fresh token for it, first, then the valid
 * tokens of the other accounts this browser signed in to, at most DEVICE_COOKIE_MAX_ACCOUNTS.
 */
export function deviceCookieAfterSignIn(
  key: Buffer,
  cookieValue: string | undefined,
  userId: string,
  now: Date,
): string {
  // The other accounts' tokens are signed with their own keys: kept while well-formed and young,
  // judged when their account signs in.
  const others = tokensOf(cookieValue).filter((text) => {
    const read = unsignedToken(text, now);
    return read !== null && read.userId !== userId;
  });
  return [issueDeviceToken(key, userId, now), ...others].slice(0, DEVICE_COOKIE_MAX_ACCOUNTS).join('~');
}

function tokensOf(cookieValue: string | undefined): string[] {
  if (!cookieValue || cookieValue.length > 2_000) return [];
  return cookieValue.split('~').slice(0, DEVICE_COOKIE_MAX_ACCOUNTS);
}

/** The value of one cookie in a `Cookie` header (the first of that name), undecoded. */
export function cookieValueOf(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    if (part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}
