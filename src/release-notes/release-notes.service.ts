import { Injectable } from '@nestjs/common';
import type { Tenant } from '../apps/tenant-resolver.js';
import { AuditService } from '../audit/audit.service.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { badRequest, notFound } from '../common/errors/app-exception.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { deliverableNotes, versionKey } from './release-note-delivery.js';
import type { ReleaseNote } from './release-note.entity.js';
import type { CreateReleaseNoteDto, ReleaseNotesQuery, UpdateReleaseNoteDto } from './release-notes.dto.js';
import { ReleaseNotesRepository, type ReleaseNotePatch } from './release-notes.repository.js';
import { AppsRepository } from '../apps/apps.repository.js';

const releaseNoteNotFound = () => notFound('Release note');

/** Release notes per app and version: authored in the console, shown by the SDK after an update. */
@Injectable()
export class ReleaseNotesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly notes: ReleaseNotesRepository,
    private readonly audit: AuditService,
    private readonly apps: AppsRepository,
  ) {}

  // ---- Console ----

  list(auth: OrgAuthContext, query: ReleaseNotesQuery): Promise<{ items: ReleaseNote[]; total: number }> {
    return this.notes.page(auth.organizationId, query);
  }

  async get(auth: OrgAuthContext, noteId: string): Promise<ReleaseNote> {
    const note = await this.notes.find(auth.organizationId, noteId);
    if (!note) throw releaseNoteNotFound();
    return note;
  }

  create(auth: OrgAuthContext, input: CreateReleaseNoteDto): Promise<ReleaseNote> {
    return this.uow.run(async () => {
      await this.apps.assertExists(auth.organizationId, input.appId);
      const note = await this.notes.insert(auth.organizationId, {
        appId: input.appId,
        version: input.version,
        versionKey: versionKey(input.version)!,
        title: input.title,
        body: input.body,
        publishedAt: input.isPublished ? new Date() : null,
      });
      await this.record(auth, 'release_note.created', note, { version: note.version, appId: note.appId });
      return note;
    });
  }

  async update(auth: OrgAuthContext, noteId: string, input: UpdateReleaseNoteDto): Promise<ReleaseNote> {
    if (input.version === undefined && input.title === undefined && input.body === undefined) {
      throw badRequest('Nothing to update', { hint: 'Send at least one of version, title, body' });
    }
    return this.uow.run(async () => {
      await this.lockedNote(auth, noteId);
      const patch: ReleaseNotePatch = {};
      if (input.version !== undefined) {
        patch.version = input.version;
        patch.versionKey = versionKey(input.version)!;
      }
      if (input.title !== undefined) patch.title = input.title;
      if (input.body !== undefined) patch.body = input.body;
      const note = await this.notes.update(auth.organizationId, noteId, patch);
      await this.record(auth, 'release_note.updated', note, {
        fields: (['version', 'title', 'body'] as const).filter((field) => input[field] !== undefined),
      });
      return note;
    });
  }

  /** Deletes the note; its view records go with it (foreign key cascade). */
  async remove(auth: OrgAuthContext, noteId: string): Promise<void> {
    await this.uow.run(async () => {
      const note = await this.lockedNote(auth, noteId);
      await this.notes.remove(auth.organizationId, noteId);
      await this.record(auth, 'release_note.deleted', note, { version: note.version, appId: note.appId });
    });
  }

  /** Idempotent: publishing a published note keeps its `publishedAt`. */
  publish(auth: OrgAuthContext, noteId: string): Promise<ReleaseNote> {
    return this.setPublished(auth, noteId, true);
  }

  /** Idempotent; the devices' seen records stay, so republishing does not show the note again. */
  unpublish(auth: OrgAuthContext, noteId: string): Promise<ReleaseNote> {
    return this.setPublished(auth, noteId, false);
  }

  // ---- SDK ----

  /** Published notes of the app the device has not seen, by the delivery rule, newest first. */
  async pending(tenant: Tenant, deviceId: string, installed: string, current: string): Promise<ReleaseNote[]> {
    return deliverableNotes(await this.notes.unseenPublished(tenant, deviceId), installed, current);
  }

  /** Records that the device has seen the note; seeing it again changes nothing. */
  async markSeen(tenant: Tenant, deviceId: string, noteId: string): Promise<void> {
    if (!(await this.notes.markSeen(tenant, deviceId, noteId))) throw releaseNoteNotFound();
  }

  // ---- Shared ----

  private setPublished(auth: OrgAuthContext, noteId: string, published: boolean): Promise<ReleaseNote> {
    return this.uow.run(async () => {
      const note = await this.lockedNote(auth, noteId);
      if (note.isPublished === published) return note;
      const changed = await this.notes.setPublished(auth.organizationId, noteId, published);
      await this.record(auth, published ? 'release_note.published' : 'release_note.unpublished', note, {
        version: note.version,
      });
      return changed;
    });
  }

  private async lockedNote(auth: OrgAuthContext, noteId: string): Promise<ReleaseNote> {
    const note = await this.notes.find(auth.organizationId, noteId, { lock: true });
    if (!note) throw releaseNoteNotFound();
    return note;
  }

  private record(
    auth: OrgAuthContext,
    action: string,
    note: ReleaseNote,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(auth, {
      organizationId: auth.organizationId,
      action,
      resourceType: 'release_note',
      resourceId: note.id,
      metadata,
    });
  }
}
