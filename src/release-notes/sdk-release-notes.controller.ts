import { Controller, Get, HttpCode, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { requestDeviceId } from '../common/access/request-device-id.js';
import { badRequest } from '../common/errors/app-exception.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { PendingNotesQuery, toReleaseNoteResponse } from './release-notes.dto.js';
import { ReleaseNotesService } from './release-notes.service.js';

const DEVICE_ID_MAX = 200;

/**
 * The SDK's release notes: identity headers name the app, `X-Device-ID` the device; with the
 * device's attestation token sent along, the token names the device and `X-Device-ID` may only
 * repeat it (decision 0074).
 */
@Controller('api/v1/release-notes')
@Access({ tenant: true, deviceTokenIfSent: true })
export class SdkReleaseNotesController {
  constructor(private readonly notes: ReleaseNotesService) {}

  @Get('pending')
  async pending(@Req() request: Request, @Query() query: PendingNotesQuery) {
    const notes = await this.notes.pending(
      request.tenant!,
      deviceIdOf(request),
      query.installedVersion,
      query.currentVersion,
    );
    return { items: notes.map(toReleaseNoteResponse) };
  }

  @Post(':noteId/seen')
  @HttpCode(204)
  async seen(@Req() request: Request, @UuidParam('noteId') noteId: string): Promise<void> {
    await this.notes.markSeen(request.tenant!, deviceIdOf(request), noteId);
  }
}

function deviceIdOf(request: Request): string {
  const deviceId = requestDeviceId(request);
  if (!deviceId || deviceId.length > DEVICE_ID_MAX) {
    throw badRequest(`The X-Device-ID header is required (1 to ${DEVICE_ID_MAX} characters)`, {
      hint: 'Send the identifier the SDK keeps for this device installation',
    });
  }
  return deviceId;
}
