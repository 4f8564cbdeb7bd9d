import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OnAccountsDeactivated, type AccountLifecycleParticipant } from '../../users/account-lifecycle.service.js';

/** An account taken out of use is signed out everywhere: its dashboard sessions end with the change. */
@Injectable()
@OnAccountsDeactivated()
export class SessionsAccountLifecycle implements AccountLifecycleParticipant {
  async whileDeactivating(manager: EntityManager, userIds: readonly string[]): Promise<void> {
    await manager.query(`DELETE FROM sessions WHERE user_id = ANY($1::uuid[])`, [userIds]);
  }
}
