import { DEVICE_VERDICTS, type DeviceVerdict } from '../common/android-device-verdicts.js';
import { DEFAULT_ANDROID_POLICY, type AndroidPolicy, type IntegrityVerdict } from './play-integrity/play-integrity.js';

/**
 * An app's Play Integrity policy as stored: which verdicts it accepts (play-integrity.ts checks
 * them) and how the labels of an accepted verdict feed the device's risk score through the
 * signals the score already has (src/devices/risk-score.ts), so Android and iOS devices are
 * scored, thresholded and alerted on one scale. Pure: no I/O.
 */
export interface StoredAndroidPolicy extends AndroidPolicy {
  /**
   * A device Play lists as meeting only `MEETS_BASIC_INTEGRITY` (typically rooted, or an unlocked
   * bootloader) is recorded as jailbroken: +40 risk, and refused where `blockOnJailbreak` is on.
   */
  readonly basicIntegrityAsRooted: boolean;
  /**
   * An accepted build Play does not vouch for (`UNRECOGNIZED_VERSION`, `UNEVALUATED`, or an
   * `UNLICENSED` sideloaded install) is recorded as a development build: +15 risk, as a
   * development App Attest environment is on iOS.
   */
  readonly notFromPlayAsDevelopment: boolean;
}

export const DEFAULT_STORED_ANDROID_POLICY: StoredAndroidPolicy = {
  ...DEFAULT_ANDROID_POLICY,
  basicIntegrityAsRooted: true,
  notFromPlayAsDevelopment: true,
};

/** A stored policy (a jsonb value, perhaps from an older shape) with defaults for what it lacks. */
export function androidPolicyOf(stored: Partial<StoredAndroidPolicy> | null | undefined): StoredAndroidPolicy {
  const value = stored ?? {};
  const verdicts = Array.isArray(value.acceptedDeviceVerdicts)
    ? (value.acceptedDeviceVerdicts as unknown[]).filter(
        (label): label is DeviceVerdict =>
          typeof label === 'string' && (DEVICE_VERDICTS as readonly string[]).includes(label),
      )
    : [];
  const flag = (key: keyof Omit<StoredAndroidPolicy, 'acceptedDeviceVerdicts'>): boolean => {
    const set: unknown = value[key];
    return typeof set === 'boolean' ? set : DEFAULT_STORED_ANDROID_POLICY[key];
  };
  return {
    acceptedDeviceVerdicts: verdicts.length > 0 ? verdicts : DEFAULT_STORED_ANDROID_POLICY.acceptedDeviceVerdicts,
    refuseUnrecognizedVersion: flag('refuseUnrecognizedVersion'),
    refuseUnlicensed: flag('refuseUnlicensed'),
    basicIntegrityAsRooted: flag('basicIntegrityAsRooted'),
    notFromPlayAsDevelopment: flag('notFromPlayAsDevelopment'),
  };
}

/** The risk signals an accepted verdict sets on the device, under the app's policy. */
export interface VerdictSignals {
  /** Recorded as `jailbreak_detected` (the device's own report can only add to it). */
  readonly rooted: boolean;
  /** Recorded as the device's environment. */
  readonly environment: 'production' | 'development';
}

export function verdictSignals(verdict: IntegrityVerdict, policy: StoredAndroidPolicy): VerdictSignals {
  const labels = verdict.deviceVerdicts;
  const rooted =
    policy.basicIntegrityAsRooted &&
    !labels.includes('MEETS_DEVICE_INTEGRITY') &&
    !labels.includes('MEETS_STRONG_INTEGRITY');
  const notFromPlay =
    verdict.appRecognitionVerdict !== 'PLAY_RECOGNIZED' || verdict.appLicensingVerdict === 'UNLICENSED';
  return {
    rooted,
    environment: policy.notFromPlayAsDevelopment && notFromPlay ? 'development' : 'production',
  };
}
