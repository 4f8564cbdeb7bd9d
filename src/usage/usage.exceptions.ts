import { AppException } from '../common/errors/app-exception.js';

/**
 * 402 on a new device once the monthly-active-device limit is reached and its grace period has
 * ended; `current` is the count without the refused device. In the attestation failure-code
 * catalog, which attestation (above usage) builds its refusals from; test/unit/failure-codes-doc.spec.ts
 * checks that this one agrees with it.
 */
export const quotaExceeded = (limit: number, current: number, upgradeUrl: string) =>
  new AppException(402, 'quota_exceeded', 'quota_exceeded', {
    body: {
      message: `Your plan's limit of ${limit} monthly active devices is reached and its 7-day grace period has ended. Devices already active keep working; new devices can attest again after an upgrade or when the period resets.`,
      upgradeUrl,
      limit,
      current,
    },
    hint: 'Retrying does not help',
  });
