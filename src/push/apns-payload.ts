/** APNs refuses alert payloads above 4 KB (413 PayloadTooLarge). */
export const APNS_MAX_PAYLOAD_BYTES = 4096;

/** What a push says: shown as an alert; `data` rides along for the app. */
export interface PushNotice {
  readonly title: string;
  readonly body: string;
  readonly data: Readonly<Record<string, string>>;
}

const ELLIPSIS = '…';

/**
 * The APNs JSON payload of a notice, within APNS_MAX_PAYLOAD_BYTES: the body is shortened (by
 * whole characters, with an ellipsis) until it fits; then the title. `data` is kept whole.
 */
export function apnsPayload(notice: PushNotice): string {
  const render = (title: string, body: string) =>
    JSON.stringify({ aps: { alert: { title, body }, sound: 'default' }, ...notice.data });
  let title = [...notice.title];
  let body = [...notice.body];
  let payload = render(notice.title, notice.body);
  while (Buffer.byteLength(payload) > APNS_MAX_PAYLOAD_BYTES) {
    const over = Buffer.byteLength(payload) - APNS_MAX_PAYLOAD_BYTES;
    // At least one character, roughly as many as the bytes over (a character is 1 to 4 bytes, escaped up to 6).
    const cut = Math.max(1, Math.ceil(over / 6));
    if (body.length > 0) body = body.slice(0, Math.max(0, body.length - cut));
    else if (title.length > 0) title = title.slice(0, Math.max(0, title.length - cut));
    else throw new RangeError('push data alone exceeds the APNs payload limit');
    payload = render(
      title.length < [...notice.title].length ? title.join('') + ELLIPSIS : title.join(''),
      body.length < [...notice.body].length ? body.join('') + ELLIPSIS : body.join(''),
    );
  }
  return payload;
}

/** What the service does with an APNs answer. */
export type ApnsOutcome = 'sent' | 'unregistered' | 'retry' | 'renew_token' | 'failed';

/**
 * APNs answers (Apple's "Handling notification responses from APNs"): 200 sent; 410 and a bad
 * or foreign device token mean the token is dead; an expired or refused provider token is
 * renewed and the push retried; 429 and 5xx are retried; anything else fails for good.
 */
export function apnsOutcome(status: number, reason: string | null): ApnsOutcome {
  if (status === 200) return 'sent';
  if (status === 410) return 'unregistered';
  if (status === 400 && (reason === 'BadDeviceToken' || reason === 'DeviceTokenNotForTopic')) return 'unregistered';
  if (status === 403 && (reason === 'ExpiredProviderToken' || reason === 'InvalidProviderToken')) {
    return 'renew_token';
  }
  if (status === 429 || status >= 500) return 'retry';
  return 'failed';
}
