import { Injectable } from '@nestjs/common';
import { OnAccountsDeactivated, type AccountLifecycleParticipant } from '../../users/account-lifecycle.service.js';
import { SessionsRepository } from './sessions.repository.js';

/** An account taken out of use is signed out everywhere: its dashboard sessions end with the change. */
@Injectable()
@OnAccountsDeactivated()
export class SessionsAccountLifecycle implements AccountLifecycleParticipant {
  constructor(private readonly sessions: SessionsRepository) {}

  async whileDeactivating(userIds: readonly string[]): Promise<void> {
    await this.sessions.deleteForUsers(userIds);
  }
}
