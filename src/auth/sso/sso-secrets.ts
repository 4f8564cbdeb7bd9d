import { Inject, Injectable } from '@nestjs/common';
import { randomSecret } from '../../common/crypto.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { SecretBox } from '../../common/secret-box.js';
import { ServiceSecretsRepository } from '../service-secrets.repository.js';

/**
 * Seals and opens identity providers' client secrets. The master secret is SSO_SECRET_KEY, or,
 * like the session secret, one generated once and kept in `service_settings`, so every instance
 * reads the same one. Setting SSO_SECRET_KEY keeps the key out of database backups.
 */
@Injectable()
export class SsoSecrets {
  private box: Promise<SecretBox> | null = null;

  constructor(
    private readonly secrets: ServiceSecretsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async seal(clientSecret: string, organizationId: string): Promise<string> {
    return (await this.secretBox()).seal(clientSecret, organizationId);
  }

  async open(sealed: string, organizationId: string): Promise<string | null> {
    return (await this.secretBox()).open(sealed, organizationId);
  }

  private secretBox(): Promise<SecretBox> {
    if (!this.box) {
      const box = this.masterSecret().then((secret) => new SecretBox(secret, 'sso-client-secret'));
      // A failed read (database down) is retried by the next caller rather than remembered.
      void box.catch(() => {
        if (this.box === box) this.box = null;
      });
      this.box = box;
    }
    return this.box;
  }

  private async masterSecret(): Promise<string> {
    if (this.config.ssoSecretKey) return this.config.ssoSecretKey;
    return this.secrets.secret('sso_secret_key', () => randomSecret(48));
  }
}
