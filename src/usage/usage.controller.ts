import { Controller, Get } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UsageService } from './usage.service.js';

/** Monthly active devices against the plan; answers are cached five minutes and may lag. */
@Controller('api/v1')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get('tenants/me/usage')
  @Access({ session: 'viewer' })
  canonical(@OrgAuth() auth: OrgAuthContext) {
    return this.usage.canonical(auth.organizationId);
  }

  /** The legacy shape, whose names predate MAD pricing. */
  @Get('tenant/usage')
  @Access({ session: 'viewer' })
  legacy(@OrgAuth() auth: OrgAuthContext) {
    return this.usage.legacy(auth.organizationId);
  }

  @Get('org/usage')
  @Access({ session: 'viewer', apiKey: ['org:read'] })
  organization(@OrgAuth() auth: OrgAuthContext) {
    return this.usage.canonical(auth.organizationId);
  }
}
