import { describe, expect, it } from '@jest/globals';
import type { IntegrityVerdict } from './play-integrity/play-integrity.js';
import { androidPolicyOf, DEFAULT_STORED_ANDROID_POLICY, verdictSignals } from './android-policy.js';

const verdict = (overrides: Partial<IntegrityVerdict> = {}): IntegrityVerdict => ({
  packageName: 'com.acme.app',
  timestampMillis: 1,
  appRecognitionVerdict: 'PLAY_RECOGNIZED',
  deviceVerdicts: ['MEETS_DEVICE_INTEGRITY', 'MEETS_BASIC_INTEGRITY'],
  appLicensingVerdict: 'LICENSED',
  versionCode: '1',
  requestKind: 'standard',
  ...overrides,
});

describe('Android policy', () => {
  it('fills what a stored policy lacks with the defaults and drops unknown labels', () => {
    expect(androidPolicyOf(null)).toEqual(DEFAULT_STORED_ANDROID_POLICY);
    const policy = androidPolicyOf({
      acceptedDeviceVerdicts: ['MEETS_BASIC_INTEGRITY', 'MEETS_VIRTUAL_INTEGRITY' as never],
      refuseUnlicensed: true,
    });
    expect(policy.acceptedDeviceVerdicts).toEqual(['MEETS_BASIC_INTEGRITY']);
    expect(policy.refuseUnlicensed).toBe(true);
    expect(policy.refuseUnrecognizedVersion).toBe(true);
    expect(androidPolicyOf({ acceptedDeviceVerdicts: [] }).acceptedDeviceVerdicts).toEqual(
      DEFAULT_STORED_ANDROID_POLICY.acceptedDeviceVerdicts,
    );
  });

  it('scores a Play-recognised build on a device with device integrity as clean', () => {
    expect(verdictSignals(verdict(), DEFAULT_STORED_ANDROID_POLICY)).toEqual({
      rooted: false,
      environment: 'production',
    });
  });

  it('records a device meeting only basic integrity as rooted, unless the policy says otherwise', () => {
    const basic = verdict({ deviceVerdicts: ['MEETS_BASIC_INTEGRITY'] });
    expect(verdictSignals(basic, DEFAULT_STORED_ANDROID_POLICY).rooted).toBe(true);
    expect(verdictSignals(basic, { ...DEFAULT_STORED_ANDROID_POLICY, basicIntegrityAsRooted: false }).rooted).toBe(
      false,
    );
    expect(
      verdictSignals(verdict({ deviceVerdicts: ['MEETS_STRONG_INTEGRITY'] }), DEFAULT_STORED_ANDROID_POLICY).rooted,
    ).toBe(false);
  });

  it('records an unrecognised or sideloaded build as a development build', () => {
    expect(
      verdictSignals(verdict({ appRecognitionVerdict: 'UNRECOGNIZED_VERSION' }), DEFAULT_STORED_ANDROID_POLICY),
    ).toEqual({
      rooted: false,
      environment: 'development',
    });
    expect(
      verdictSignals(verdict({ appLicensingVerdict: 'UNLICENSED' }), DEFAULT_STORED_ANDROID_POLICY).environment,
    ).toBe('development');
    expect(
      verdictSignals(verdict({ appLicensingVerdict: 'UNLICENSED' }), {
        ...DEFAULT_STORED_ANDROID_POLICY,
        notFromPlayAsDevelopment: false,
      }).environment,
    ).toBe('production');
  });
});
