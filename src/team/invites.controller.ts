import { Body, Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { InvitesService } from './invites.service.js';
import { CreateInviteDto, toInviteResponse } from './team.dto.js';

/** Invitations: any member (or an `org:read` key) reads; Admins (or an `admin:team` key) write. */
@Controller('api/v1/org/invites')
export class InvitesController {
  constructor(private readonly invites: InvitesService) {}

  @Get()
  @Access({ session: 'viewer', apiKey: ['org:read'] })
  async list(@OrgAuth() auth: OrgAuthContext) {
    return (await this.invites.listPending(auth)).map(toInviteResponse);
  }

  /** 200 with the invite, as the interface document states. */
  @Post()
  @Access({ session: 'admin', apiKey: ['admin:team'] })
  @HttpCode(200)
  async create(@OrgAuth() auth: OrgAuthContext, @Body() body: CreateInviteDto) {
    return toInviteResponse(await this.invites.create(auth, body));
  }

  @Delete(':inviteId')
  @Access({ session: 'admin', apiKey: ['admin:team'] })
  @HttpCode(204)
  async revoke(@OrgAuth() auth: OrgAuthContext, @UuidParam('inviteId') inviteId: string): Promise<void> {
    await this.invites.revoke(auth, inviteId);
  }
}
