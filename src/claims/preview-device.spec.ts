import { describe, expect, it } from '@jest/globals';
import { PREVIEW_DEVICE_KEY_ID, previewDeviceContext } from './preview-device.js';

describe('previewDeviceContext', () => {
  it('is "a device named preview-device" when the request describes none: key id and model', () => {
    const device = previewDeviceContext();
    expect(device.keyId).toBe(PREVIEW_DEVICE_KEY_ID);
    expect(device.deviceModel).toBe('preview-device');
    expect(device).toMatchObject({ riskScore: 0, attestationCount: 1, jailbreakDetected: false });
  });

  it('takes what the request sets', () => {
    const device = previewDeviceContext({ keyId: 'k', deviceModel: 'iPhone16,1', country: 'de' });
    expect(device).toMatchObject({ keyId: 'k', deviceModel: 'iPhone16,1', country: 'DE' });
  });
});
