import { describe, expect, it } from '@jest/globals';
import { askingDevice } from './asking-device.js';

describe('askingDevice', () => {
  it("names the token's device, whatever else the request names, and the named device without a token", () => {
    expect(askingDevice('key-a', null)).toEqual({ admitted: true, deviceId: 'key-a' });
    expect(askingDevice('key-a', 'key-a')).toEqual({ admitted: true, deviceId: 'key-a' });
    expect(askingDevice('key-a', 'key-b')).toEqual({ admitted: false, subject: 'key-a', named: 'key-b' });
    expect(askingDevice('key-a', '')).toMatchObject({ admitted: false });
    expect(askingDevice(null, 'key-b')).toEqual({ admitted: true, deviceId: 'key-b' });
    expect(askingDevice(null, null)).toEqual({ admitted: true, deviceId: null });
  });
});
