/**
 * Play Integrity's device labels, strongest first; Play lists every label the device meets. Kept in
 * the kernel because an app's Android identity (apps) is validated against them and verdicts
 * (attestation) are checked against them.
 */
export const DEVICE_VERDICTS = ['MEETS_STRONG_INTEGRITY', 'MEETS_DEVICE_INTEGRITY', 'MEETS_BASIC_INTEGRITY'] as const;
export type DeviceVerdict = (typeof DEVICE_VERDICTS)[number];
