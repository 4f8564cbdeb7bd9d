import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import {
  CreateReleaseNoteDto,
  ReleaseNotesQuery,
  UpdateReleaseNoteDto,
  toReleaseNoteResponse,
} from './release-notes.dto.js';
import { ReleaseNotesService } from './release-notes.service.js';
import { pageEnvelope } from '../common/pagination.js';

const READ = { session: 'viewer', apiKey: ['release_notes:read'] } as const;
const WRITE = { session: 'member', apiKey: ['release_notes:write'] } as const;

/** Release notes in the console: any member reads, Members and above write. Bad input is 400. */
@Controller('api/v1/org/release-notes')
@InvalidInputStatus(400)
export class ReleaseNotesController {
  constructor(private readonly notes: ReleaseNotesService) {}

  @Get()
  @Access(READ)
  async list(@OrgAuth() auth: OrgAuthContext, @Query() query: ReleaseNotesQuery) {
    const { items, total } = await this.notes.list(auth, query);
    return pageEnvelope('metadata', query, items.map(toReleaseNoteResponse), total);
  }

  @Get(':noteId')
  @Access(READ)
  async get(@OrgAuth() auth: OrgAuthContext, @UuidParam('noteId') noteId: string) {
    return toReleaseNoteResponse(await this.notes.get(auth, noteId));
  }

  @Post()
  @Access(WRITE)
  async create(@OrgAuth() auth: OrgAuthContext, @Body() body: CreateReleaseNoteDto) {
    return toReleaseNoteResponse(await this.notes.create(auth, body));
  }

  @Patch(':noteId')
  @Access(WRITE)
  async update(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('noteId') noteId: string,
    @Body() body: UpdateReleaseNoteDto,
  ) {
    return toReleaseNoteResponse(await this.notes.update(auth, noteId, body));
  }

  @Delete(':noteId')
  @Access(WRITE)
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @UuidParam('noteId') noteId: string): Promise<void> {
    await this.notes.remove(auth, noteId);
  }

  @Post(':noteId/publish')
  @Access(WRITE)
  @HttpCode(200)
  async publish(@OrgAuth() auth: OrgAuthContext, @UuidParam('noteId') noteId: string) {
    return toReleaseNoteResponse(await this.notes.publish(auth, noteId));
  }

  @Post(':noteId/unpublish')
  @Access(WRITE)
  @HttpCode(200)
  async unpublish(@OrgAuth() auth: OrgAuthContext, @UuidParam('noteId') noteId: string) {
    return toReleaseNoteResponse(await this.notes.unpublish(auth, noteId));
  }
}
