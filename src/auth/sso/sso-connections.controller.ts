import { Body, Controller, Delete, Get, HttpCode, Put } from '@nestjs/common';
import { Access } from '../../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../../common/access/auth-context.js';
import { SsoConnectionsService } from './sso-connections.service.js';
import { toSsoConnectionResponse } from './sso-connection-response.js';
import { PutSsoConnectionDto } from './sso.dto.js';

/** The organization's OpenID Connect connection (docs/sso.md). The client secret is never returned. */
@Controller('api/v1/org/sso')
export class SsoConnectionsController {
  constructor(private readonly connections: SsoConnectionsService) {}

  @Get()
  @Access({ session: 'admin' })
  async get(@OrgAuth() auth: OrgAuthContext) {
    return toSsoConnectionResponse(await this.connections.get(auth), this.connections.redirectUri);
  }

  @Put()
  @Access({ session: 'admin' })
  async put(@OrgAuth() auth: OrgAuthContext, @Body() body: PutSsoConnectionDto) {
    return toSsoConnectionResponse(await this.connections.put(auth, body), this.connections.redirectUri);
  }

  @Delete()
  @Access({ session: 'admin' })
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext): Promise<void> {
    await this.connections.remove(auth);
  }
}
