import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AndroidIdentityService } from './android-identity.service.js';
import { verdictSignals } from './android-policy.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { androidNotConfigured, integrityFailure } from './android-attestation.exceptions.js';
import type { ValidateAndroidDto } from './attestation.dto.js';
import { AttestationService } from './attestation.service.js';
import { verifyIntegrityToken } from './play-integrity/play-integrity.js';
import type { MintedToken } from '../device-tokens/token.service.js';

/**
 * The key an Android installation's device is stored under: base64 SHA-256 of the app and the
 * SDK's installation id, so one installation is one device of one app, and the same id sent to
 * another app names another device.
 */
export function androidKeyId(appId: string, installationId: string): string {
  return createHash('sha256').update(`android\n${appId}\n${installationId}`, 'utf8').digest('base64');
}

/**
 * Android validation and re-attestation (decision 0073): a fresh Play Integrity token, verified
 * locally with the app's keys against the single-use challenge (play-integrity.ts), then the
 * same gate, admission, quota, events and token as App Attest validate (AttestationService).
 * There is no assertion counter: a known installation re-attests with a new token and challenge.
 */
@Injectable()
export class AndroidAttestationService {
  constructor(
    private readonly android: AndroidIdentityService,
    private readonly attestation: AttestationService,
  ) {}

  async validate(tenant: Tenant, input: ValidateAndroidDto): Promise<MintedToken> {
    // Before the gate: an app without an Android build says nothing about the device.
    const verification = await this.android.forAttestation(tenant.organizationId, tenant.appId);
    if (!verification) throw androidNotConfigured();
    const { integrityToken, challenge, installationId, ...report } = input;
    return this.attestation.validateVerified(
      tenant,
      { keyId: androidKeyId(tenant.appId, installationId), challenge, report },
      async () => {
        const outcome = await verifyIntegrityToken(integrityToken, {
          identity: verification.identity,
          policy: verification.policy,
          challenge,
          now: Date.now(),
        });
        if (!outcome.ok) throw integrityFailure(outcome.code, outcome.message);
        return { platform: 'android', ...verdictSignals(outcome.verdict, verification.policy) };
      },
    );
  }
}
