import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, UseGuards } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { toConsoleClaimResponse, toConsoleTestResult } from './claim-response.js';
import { ClaimsService } from './claims.service.js';
import { ConsoleClaimsKeyGuard } from './console-claims-key.guard.js';
import {
  ConsoleCreateClaimDto,
  ConsolePreviewClaimDto,
  ConsoleReorderClaimsDto,
  ConsoleTestClaimDto,
  ConsoleUpdateClaimDto,
} from './console-claims.dto.js';
import {
  assertConsoleUpdate,
  consoleDeviceOf,
  fromConsoleCreate,
  fromConsoleTestDefinition,
  fromConsoleUpdate,
  inConsoleCase,
} from './console-claims.mapper.js';

/**
 * The console claims surface: the session model in snake_case, for dashboard sessions and for
 * `gpat_` / `aat_` API keys. `:claimRef` is a claim UUID or its `claim_key`; there is no bulk.
 */
@Controller('api/v1/org/claims')
@InvalidInputStatus(400)
@UseGuards(ConsoleClaimsKeyGuard)
export class ConsoleClaimsController {
  constructor(private readonly claims: ClaimsService) {}

  @Get()
  @Access({ session: 'viewer', apiKey: ['claims:read'] })
  async list(@OrgAuth() auth: OrgAuthContext) {
    return (await this.claims.list(auth)).map(toConsoleClaimResponse);
  }

  @Post()
  @Access({ session: 'admin', apiKey: ['claims:write'] })
  async create(@OrgAuth() auth: OrgAuthContext, @Body() body: ConsoleCreateClaimDto) {
    return toConsoleClaimResponse(await inConsoleCase(this.claims.create(auth, fromConsoleCreate(body))));
  }

  @Put('reorder')
  @Access({ session: 'admin', apiKey: ['claims:write'] })
  @HttpCode(204)
  async reorder(@OrgAuth() auth: OrgAuthContext, @Body() body: ConsoleReorderClaimsDto): Promise<void> {
    await this.claims.reorder(auth, body.claim_ids);
  }

  @Post('test')
  @Access({ session: 'viewer', apiKey: ['claims:read'] })
  @HttpCode(200)
  async test(@OrgAuth() auth: OrgAuthContext, @Body() body: ConsoleTestClaimDto) {
    const { claim, ...context } = body;
    const result = this.claims.test(auth, fromConsoleTestDefinition(claim), consoleDeviceOf(context));
    return toConsoleTestResult(await inConsoleCase(result, 'claim.'));
  }

  @Get(':claimRef')
  @Access({ session: 'viewer', apiKey: ['claims:read'] })
  async get(@OrgAuth() auth: OrgAuthContext, @Param('claimRef') ref: string) {
    return toConsoleClaimResponse(await this.claims.getByRef(auth, ref));
  }

  @Patch(':claimRef')
  @Access({ session: 'admin', apiKey: ['claims:write'] })
  async update(@OrgAuth() auth: OrgAuthContext, @Param('claimRef') ref: string, @Body() body: ConsoleUpdateClaimDto) {
    const claim = await this.claims.getByRef(auth, ref);
    const patch = fromConsoleUpdate(body);
    assertConsoleUpdate(patch, claim);
    return toConsoleClaimResponse(await inConsoleCase(this.claims.update(auth, claim.id, patch)));
  }

  @Delete(':claimRef')
  @Access({ session: 'admin', apiKey: ['claims:write'] })
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @Param('claimRef') ref: string): Promise<void> {
    await this.claims.remove(auth, (await this.claims.getByRef(auth, ref)).id);
  }

  @Post(':claimRef/preview')
  @Access({ session: 'viewer', apiKey: ['claims:read'] })
  @HttpCode(200)
  async preview(@OrgAuth() auth: OrgAuthContext, @Param('claimRef') ref: string, @Body() body: ConsolePreviewClaimDto) {
    return toConsoleTestResult(
      await this.claims.preview(auth, await this.claims.getByRef(auth, ref), consoleDeviceOf(body)),
    );
  }
}
