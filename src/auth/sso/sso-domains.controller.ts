import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { Access } from '../../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../../common/access/auth-context.js';
import { invalidField } from '../../common/errors/app-exception.js';
import { toSsoDomainResponse } from './sso-connection-response.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { DOMAIN } from './sso.dto.js';

/** The connection's e-mail domains and their proof of ownership by DNS (docs/sso.md). */
@Controller('api/v1/org/sso/domains')
export class SsoDomainsController {
  constructor(private readonly domains: SsoDomainsService) {}

  @Get()
  @Access({ session: 'admin' })
  async list(@OrgAuth() auth: OrgAuthContext) {
    return { items: (await this.domains.list(auth)).map(toSsoDomainResponse) };
  }

  @Post(':domain/verify')
  @Access({ session: 'admin' })
  @RateLimit('sso-domain-verify')
  @HttpCode(200)
  async verify(@OrgAuth() auth: OrgAuthContext, @Param('domain') raw: string) {
    const domain = raw.trim().toLowerCase();
    if (domain.length > 253 || !DOMAIN.test(domain)) {
      throw invalidField('domain', 'must be a domain name such as example.com');
    }
    return toSsoDomainResponse(await this.domains.verify(auth, domain));
  }
}
