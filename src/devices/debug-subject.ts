/**
 * The `sub` of a device token minted for a debug token: `debug:<tokenId>`, with `:<deviceId>`
 * when the build names itself. Attested keys are base64 and never start with `debug:`.
 */
export function debugSubject(tokenId: string, deviceId: string | undefined): string {
  return deviceId ? `debug:${tokenId}:${deviceId}` : `debug:${tokenId}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The debug token a device token's `sub` was minted for, or null for an attested key. */
export function debugTokenIdOf(subject: string): string | null {
  if (!subject.startsWith('debug:')) return null;
  const id = subject.slice(6, 42);
  const rest = subject.slice(42);
  return UUID.test(id) && (rest === '' || rest.startsWith(':')) ? id : null;
}
