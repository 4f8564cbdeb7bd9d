import { Body, Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { ApiKeysService } from './api-keys.service.js';
import { CreateApiKeyDto, toApiKeyResponse } from './api-key.dto.js';

/** API key management for organization admins; the key is shown once, at creation or rotation. */
@Controller('api/v1/org/api-keys')
@Access({ session: 'admin' })
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  async list(@OrgAuth() auth: OrgAuthContext) {
    return (await this.keys.list(auth)).map(toApiKeyResponse);
  }

  @Post()
  async create(@OrgAuth() auth: OrgAuthContext, @Body() body: CreateApiKeyDto) {
    const { key, record } = await this.keys.create(auth, body);
    return { ...toApiKeyResponse(record), key };
  }

  @Post(':id/rotate')
  @HttpCode(200)
  async rotate(@OrgAuth() auth: OrgAuthContext, @UuidParam('id') id: string) {
    const { key, record } = await this.keys.rotate(auth, id);
    return { ...toApiKeyResponse(record), key };
  }

  @Delete(':id')
  @HttpCode(204)
  async revoke(@OrgAuth() auth: OrgAuthContext, @UuidParam('id') id: string): Promise<void> {
    await this.keys.revoke(auth, id);
  }
}
