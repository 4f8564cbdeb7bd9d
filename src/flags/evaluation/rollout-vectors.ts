/**
 * Known answers for rolloutBucket, for the README and for SDK authors checking their port.
 * Computed independently of the service (`printf '%s' 'flagKey:deviceId' | sha256sum`),
 * and asserted against rolloutBucket in rollout.spec.ts. `uint32` is the first four digest
 * bytes read big-endian. The last vector checks UTF-8 encoding of non-ASCII keys and ids.
 */
export interface RolloutVector {
  readonly flagKey: string;
  readonly deviceId: string;
  readonly uint32: number;
  readonly bucket: number;
}

export const ROLLOUT_VECTORS: readonly RolloutVector[] = [
  { flagKey: 'new-checkout', deviceId: 'device-001', uint32: 3629650479, bucket: 50.479 },
  { flagKey: 'new-checkout', deviceId: 'device-002', uint32: 2215316230, bucket: 16.23 },
  { flagKey: 'dark_mode', deviceId: '3F2504E0-4F89-11D3-9A0C-0305E82C3301', uint32: 879378747, bucket: 78.747 },
  { flagKey: 'onboarding.v2', deviceId: 'A1B2C3D4E5F6', uint32: 1981184687, bucket: 84.687 },
  { flagKey: 'pricing-experiment', deviceId: '00008030-001A2D3C0E12802E', uint32: 2136565201, bucket: 65.201 },
  { flagKey: 'café-banner', deviceId: '設備-42', uint32: 2125545467, bucket: 45.467 },
];
