import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { PushCredentialsRepository } from './push-credentials.repository.js';
import { SecretBox } from '../common/secret-box.js';

/**
 * The key that encrypts stored APNs signing keys: PUSH_ENCRYPTION_KEY, else one generated once
 * and kept in the database (so every instance has it; the encryption then protects against a
 * leak of the credentials table alone, not of the whole database).
 */
@Injectable()
export class PushKey {
  private key: Promise<Buffer> | null = null;

  constructor(
    private readonly credentials: PushCredentialsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The box stored APNs keys are sealed in, bound to their app; it still opens those sealed in the
   * push feature's first format (the key itself, no context) until they are uploaded again.
   */
  async box(): Promise<SecretBox> {
    return new SecretBox(await this.get(), 'push-private-key', { readsUnboundV1: true });
  }

  private get(): Promise<Buffer> {
    if (this.config.pushEncryptionKey) return Promise.resolve(this.config.pushEncryptionKey);
    this.key ??= this.stored().catch((error: unknown) => {
      this.key = null;
      throw error;
    });
    return this.key;
  }

  private async stored(): Promise<Buffer> {
    const value = await this.credentials.storedEncryptionKey(() => randomBytes(32).toString('base64'));
    return Buffer.from(value, 'base64');
  }
}
