import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { Access, Public } from '../../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../../common/access/auth-context.js';
import { UuidParam } from '../../common/validation/uuid-param.js';
import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import { CliSessionsService } from './cli-sessions.service.js';

/** Command-line sign-in (snake_case): create, poll, and approval by a signed-in user. */
@Controller('api/v1/auth/cli/sessions')
export class CliSessionsController {
  constructor(private readonly sessions: CliSessionsService) {}

  @Post()
  @Public()
  @RateLimit('cli-session-ip')
  @HttpCode(201)
  create() {
    return this.sessions.create();
  }

  @Get(':sessionId')
  @Public()
  @RateLimit('cli-session-poll-ip')
  poll(@UuidParam('sessionId') sessionId: string) {
    return this.sessions.poll(sessionId);
  }

  @Post(':sessionId/approve')
  @Access({ session: 'viewer' })
  @HttpCode(200)
  approve(@OrgAuth() auth: OrgAuthContext, @UuidParam('sessionId') sessionId: string) {
    return this.sessions.decide(auth, sessionId, true);
  }

  @Post(':sessionId/deny')
  @Access({ session: 'viewer' })
  @HttpCode(200)
  deny(@OrgAuth() auth: OrgAuthContext, @UuidParam('sessionId') sessionId: string) {
    return this.sessions.decide(auth, sessionId, false);
  }
}
