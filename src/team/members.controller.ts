import { Body, Controller, Delete, Get, HttpCode, Patch } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { MembersService } from './members.service.js';
import { ChangeRoleDto, toMemberResponse } from './team.dto.js';

/** Team members: any member (or an `org:read` key) reads; Admins (or an `admin:team` key) write. */
@Controller('api/v1/org/members')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @Get()
  @Access({ session: 'viewer', apiKey: ['org:read'] })
  async list(@OrgAuth() auth: OrgAuthContext) {
    return (await this.members.list(auth)).map(toMemberResponse);
  }

  @Patch(':userId')
  @Access({ session: 'admin', apiKey: ['admin:team'] })
  async changeRole(@OrgAuth() auth: OrgAuthContext, @UuidParam('userId') userId: string, @Body() body: ChangeRoleDto) {
    return toMemberResponse(await this.members.changeRole(auth, userId, body.role));
  }

  @Delete(':userId')
  @Access({ session: 'admin', apiKey: ['admin:team'] })
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @UuidParam('userId') userId: string): Promise<void> {
    await this.members.remove(auth, userId);
  }
}
