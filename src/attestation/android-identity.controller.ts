import { Body, Controller, Delete, Get, HttpCode, Put } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { PutAndroidIdentityDto } from '../apps/android-identity.dto.js';
import { AndroidIdentityService } from './android-identity.service.js';

/** An app's Android identity (Play Integrity): Admins and Owners only, as it names the app's keys. */
@Controller('api/v1/apps/:appID/android')
@InvalidInputStatus(400)
export class AndroidIdentityController {
  constructor(private readonly android: AndroidIdentityService) {}

  @Get()
  @Access({ session: 'admin' })
  get(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') appId: string) {
    return this.android.get(auth, appId);
  }

  @Put()
  @Access({ session: 'admin' })
  put(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') appId: string, @Body() body: PutAndroidIdentityDto) {
    return this.android.put(auth, appId, body);
  }

  @Delete()
  @Access({ session: 'admin' })
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') appId: string): Promise<void> {
    await this.android.remove(auth, appId);
  }
}
