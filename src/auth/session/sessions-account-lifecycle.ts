import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AccountLifecycleService, type AccountLifecycleParticipant } from '../../users/account-lifecycle.service.js';

/** An account taken out of use is signed out everywhere: its dashboard sessions end with the change. */
@Injectable()
export class SessionsAccountLifecycle implements AccountLifecycleParticipant, OnModuleInit {
  constructor(private readonly lifecycle: AccountLifecycleService) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  async whileDeactivating(manager: EntityManager, userIds: readonly string[]): Promise<void> {
    await manager.query(`DELETE FROM sessions WHERE user_id = ANY($1::uuid[])`, [userIds]);
  }
}
