import { Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { PasswordGate } from './password-gate.js';
import { SessionsModule } from './session/sessions.module.js';

/**
 * The one gate every password check passes (decision 0066), in a module of its own so that both
 * password sign-in (auth) and the SSO link page's password confirmation (sso) import the same gate.
 */
@Module({
  imports: [UsersModule, RateLimitModule, SessionsModule],
  providers: [PasswordGate],
  exports: [PasswordGate],
})
export class PasswordGateModule {}
