import { Injectable } from '@nestjs/common';
import { storedServiceSecret } from '../database/service-settings.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/**
 * Auth's service-wide secrets kept in `service_settings` when the configuration gives none (the
 * session secret, the SSO encryption key): generated once, then read alike by every instance.
 * Read outside any unit of work, so a secret is stored even when the change asking for it rolls back.
 */
@Injectable()
export class ServiceSecretsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  secret(key: 'session_secret' | 'sso_secret_key', generate: () => string): Promise<string> {
    return this.uow.outside(() => storedServiceSecret(this.uow.manager(), key, generate));
  }
}
