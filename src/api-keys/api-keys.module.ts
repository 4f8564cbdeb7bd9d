import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { UsersModule } from '../users/users.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ApiKey } from './api-key.entity.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeysOrganizationRemoval } from './api-keys-organization-removal.js';

/** Organization API keys: issue, list, revoke, and the lookup the access guard authenticates with. */
@Module({
  imports: [TypeOrmModule.forFeature([ApiKey]), AuditModule, OrganizationsModule, UsersModule],
  controllers: [ApiKeysController],
  providers: [ApiKeysRepository, ApiKeysService, ApiKeysOrganizationRemoval],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
