import type { Request } from 'express';
import { AppException } from '../errors/app-exception.js';
import { askingDevice } from './asking-device.js';

/**
 * The device of an SDK request by `X-Device-ID` and its device token, through `askingDevice`: the
 * token's subject, the header without a token, or null for neither. A header naming another
 * device than the token's answers 403 `device_id_mismatch`.
 */
export function requestDeviceId(request: Request): string | null {
  const header = request.headers['x-device-id'];
  const named = typeof header === 'string' && header.trim() !== '' ? header.trim() : null;
  const asking = askingDevice(request.deviceToken?.sub ?? null, named);
  if (!asking.admitted) throw deviceIdMismatch();
  return asking.deviceId;
}

export const deviceIdMismatch = () =>
  new AppException(403, 'device_id_mismatch', 'X-Device-ID names another device than the attestation token', {
    hint: "Leave X-Device-ID out or send the token's subject (the device's key id); a server names a device with an API key",
  });
