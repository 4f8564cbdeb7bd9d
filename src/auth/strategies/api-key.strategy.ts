import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { looksLikeApiKey } from '../../api-keys/api-key-secret.js';
import { ApiKeysService } from '../../api-keys/api-keys.service.js';
import { unauthorized } from '../../common/errors/app-exception.js';
import { bearerToken } from './bearer-token.js';
import { RequestStrategy, STRATEGY, type Principal } from './principal.js';

/**
 * An API key in `Authorization: Bearer` or `X-API-Key`. A key that is unknown, revoked or expired
 * is refused here; a personal key (`gpat_`) also needs its user to be an active member of the
 * key's organization now, read on every request so a demotion or removal applies at once. No key
 * at all: the next strategy is tried.
 */
@Injectable()
export class ApiKeyStrategy extends RequestStrategy {
  readonly strategyName = STRATEGY.apiKey;

  constructor(private readonly apiKeys: ApiKeysService) {
    super();
  }

  async validate(request: Request): Promise<Principal | null> {
    const token = bearerToken(request);
    if (!token || !looksLikeApiKey(token)) return null;
    const found = await this.apiKeys.authenticate(token);
    if (!found) throw unauthorized('The API key is invalid, revoked or expired');
    if (found.key.keyType !== 'gpat') return { kind: 'apiKey', found, role: null };
    const role = await this.apiKeys.personalRole(found.key);
    if (!role) {
      throw unauthorized("The API key's user is no longer an active member of its organization", {
        hint: 'Sign in again with attestly login',
      });
    }
    return { kind: 'apiKey', found, role };
  }
}
