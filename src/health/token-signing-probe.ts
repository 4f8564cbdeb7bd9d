import { Injectable } from '@nestjs/common';
import { SigningKeysService } from '../device-tokens/signing-keys.service.js';

/**
 * Readiness's token-signing component: a full RS256 sign-and-verify cycle with the service's real
 * signing key (JWT_PRIVATE_KEY or the stored key), the one tokens are minted with
 * (`SigningKeysService.selfCheck`).
 */
@Injectable()
export class TokenSigningProbe {
  constructor(private readonly keys: SigningKeysService) {}

  signAndVerify(): Promise<void> {
    return this.keys.selfCheck();
  }
}
