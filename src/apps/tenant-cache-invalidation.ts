import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { BlockedDevices } from '../devices/blocked-devices.js';
import { TenantResolver } from './tenant-resolver.js';

/**
 * Keeps the tenant cache in step with the token revocations every instance hears: an app
 * deactivated, reactivated or deleted anywhere is reread on its next request here, and after a
 * lost notification connection everything is.
 */
@Injectable()
export class TenantCacheInvalidation implements OnModuleInit, OnModuleDestroy {
  private readonly stops: (() => void)[] = [];

  constructor(
    private readonly blockedDevices: BlockedDevices,
    private readonly tenants: TenantResolver,
  ) {}

  onModuleInit(): void {
    this.stops.push(
      this.blockedDevices.onRevocation((revocation) => {
        if (revocation.kind === 'app') this.tenants.forgetApp(revocation.appId);
      }),
      this.blockedDevices.onResync(() => this.tenants.forgetAll()),
    );
  }

  onModuleDestroy(): void {
    for (const stop of this.stops.splice(0)) stop();
  }
}
