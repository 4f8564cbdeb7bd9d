import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AccountLifecycleService, type AccountLifecycleParticipant } from '../../users/account-lifecycle.service.js';
import { SessionsRepository } from './sessions.repository.js';

/** An account taken out of use is signed out everywhere: its dashboard sessions end with the change. */
@Injectable()
export class SessionsAccountLifecycle implements AccountLifecycleParticipant, OnModuleInit {
  constructor(
    private readonly lifecycle: AccountLifecycleService,
    private readonly sessions: SessionsRepository,
  ) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  async whileDeactivating(userIds: readonly string[]): Promise<void> {
    await this.sessions.deleteForUsers(userIds);
  }
}
