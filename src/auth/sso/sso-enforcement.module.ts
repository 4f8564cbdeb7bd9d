import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../../organizations/organizations.module.js';
import { SsoConnectionsRepository } from './sso-connections.repository.js';
import { SsoEnforcement } from './sso-enforcement.js';

/**
 * The SSO connections' table and the enforcement rules read from it, for both password sign-in
 * (auth) and the SSO feature itself.
 */
@Module({
  imports: [OrganizationsModule],
  providers: [SsoConnectionsRepository, SsoEnforcement],
  exports: [SsoConnectionsRepository, SsoEnforcement],
})
export class SsoEnforcementModule {}
