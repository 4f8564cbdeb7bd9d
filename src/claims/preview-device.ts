import type { DeviceContext } from './engine/index.js';

/** A device described by a test or preview request; anything unset takes the defaults below. */
export interface DeviceProfileInput {
  keyId?: string;
  deviceModel?: string;
  osVersion?: string;
  appVersion?: string;
  country?: string;
  riskScore?: number;
  attestationCount?: number;
  jailbreakDetected?: boolean;
  deviceIntegrity?: string;
  firstSeenDays?: number;
  suspiciousEvents?: number;
}

/**
 * The device a test or preview runs against when the request leaves a field unset: "a device
 * named preview-device" (the interface document), as its key id and as its model.
 */
export const PREVIEW_DEVICE_KEY_ID = 'preview-device';

/**
 * Integrity verdict of a device, the value `device_integrity` conditions compare: tokens are
 * only minted after App Attest succeeded, so the verdict says what is left to doubt.
 */
export function integrityVerdict(jailbreakDetected: boolean, environment?: 'development' | 'production'): string {
  if (jailbreakDetected) return 'compromised';
  return environment === 'development' ? 'development' : 'verified';
}

export function previewDeviceContext(
  profile: DeviceProfileInput = {},
  additionalData: Record<string, string> = {},
): DeviceContext {
  const jailbreakDetected = profile.jailbreakDetected ?? false;
  return {
    keyId: profile.keyId ?? PREVIEW_DEVICE_KEY_ID,
    deviceModel: profile.deviceModel ?? PREVIEW_DEVICE_KEY_ID,
    osVersion: profile.osVersion,
    appVersion: profile.appVersion,
    // Stored device countries are upper case; a preview sees what a token would.
    country: profile.country?.toUpperCase(),
    riskScore: profile.riskScore ?? 0,
    attestationCount: profile.attestationCount ?? 1,
    jailbreakDetected,
    deviceIntegrity: profile.deviceIntegrity ?? integrityVerdict(jailbreakDetected),
    firstSeenDays: profile.firstSeenDays,
    suspiciousEvents: profile.suspiciousEvents,
    additionalData,
  };
}
