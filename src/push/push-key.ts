import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { PushCredentialsRepository } from './push-credentials.repository.js';

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

  get(): Promise<Buffer> {
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
