import bcrypt from 'bcrypt';

export const MIN_PASSWORD_LENGTH = 8;

/** A hash of a password nobody has, compared against when an e-mail is unknown so that login
 * takes as long for unknown addresses as for known ones. */
let decoyHash: Promise<string> | null = null;

export function hashPassword(password: string, rounds: number): Promise<string> {
  return bcrypt.hash(password, rounds);
}

export async function verifyPassword(password: string, hash: string | null, rounds: number): Promise<boolean> {
  if (hash) return bcrypt.compare(password, hash);
  decoyHash ??= bcrypt.hash('decoy-password-for-timing', rounds);
  await bcrypt.compare(password, await decoyHash);
  return false;
}
