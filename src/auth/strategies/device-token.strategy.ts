import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { looksLikeApiKey } from '../../api-keys/api-key-secret.js';
import { DeviceTokenVerifier } from '../../device-tokens/device-token-verifier.js';
import { unauthorized } from '../../common/errors/app-exception.js';
import { DenySet } from '../../devices/deny-set.js';
import { bearerToken } from './bearer-token.js';
import { RequestStrategy, STRATEGY, type Principal } from './principal.js';

/**
 * A device's attestation token (the RS256 JWT from validate or refresh) for the app the request's
 * identity headers resolved: verified with `@nestjs/jwt` against the service's signing keys, for
 * that app, of a device that is not blocked and an app not deactivated or deleted (the deny set). An API key in its place: the next strategy is tried.
 */
@Injectable()
export class DeviceTokenStrategy extends RequestStrategy {
  readonly strategyName = STRATEGY.deviceToken;

  constructor(
    private readonly tokens: DeviceTokenVerifier,
    private readonly denySet: DenySet,
  ) {
    super();
  }

  async validate(request: Request): Promise<Principal | null> {
    const token = bearerToken(request);
    if (!token || looksLikeApiKey(token)) return null;
    const claims = await this.tokens.verify(token);
    if (!claims || claims.app_id !== request.tenant?.appId) {
      throw unauthorized('The attestation token is invalid, expired or for another app', {
        hint: 'Refresh it with POST /api/v1/attestation/refresh',
      });
    }
    const refusal = await this.denySet.refusalFor(claims.app_id, claims.sub);
    if (refusal) throw unauthorized(refusal.message, { hint: refusal.hint });
    return { kind: 'deviceToken', claims };
  }
}
