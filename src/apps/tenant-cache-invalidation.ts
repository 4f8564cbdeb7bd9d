import { Injectable } from '@nestjs/common';
import { OnTokenRevocation, type Revocation, type RevocationListener } from '../devices/deny-set.js';
import { TenantResolver } from './tenant-resolver.js';

/**
 * Keeps the tenant cache in step with the token revocations every instance hears: an app
 * deactivated, reactivated or deleted anywhere is reread on its next request here, and after a
 * lost notification connection everything is.
 */
@Injectable()
@OnTokenRevocation()
export class TenantCacheInvalidation implements RevocationListener {
  constructor(private readonly tenants: TenantResolver) {}

  revoked(revocation: Revocation): void {
    if (revocation.kind === 'app') this.tenants.forgetApp(revocation.appId);
  }

  resynced(): void {
    this.tenants.forgetAll();
  }
}
