/**
 * Which device an SDK request speaks for (decision 0074): the one rule for every route that serves
 * a device's own state (its flag values with their per-device overrides and rollout bucket, its
 * stream, its release notes). A device token names its device: its subject. A device id the
 * request names as well (the `X-Device-ID` header, OFREP's `targetingKey`) may only repeat it.
 * Without a device token (an API key: a server asking for a device; or identity headers alone
 * where a route admits them), the named id is the device. Pure: OFREP's context parser uses it too.
 */
export type AskingDevice =
  | { readonly admitted: true; readonly deviceId: string | null }
  | { readonly admitted: false; readonly subject: string; readonly named: string };

/** The gate: `subject` is the device token's `sub` (null without a token), `named` the id the request names. */
export function askingDevice(subject: string | null, named: string | null): AskingDevice {
  if (subject === null) return { admitted: true, deviceId: named };
  if (named === null || named === subject) return { admitted: true, deviceId: subject };
  return { admitted: false, subject, named };
}
