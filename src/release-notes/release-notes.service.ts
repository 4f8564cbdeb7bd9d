import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { Tenant } from '../apps/tenant-resolver.js';
import { AuditService } from '../audit/audit.service.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { badRequest, notFound } from '../common/errors/app-exception.js';
import { queryRows } from '../database/sql.js';
import { deliverableNotes, versionKey } from './release-note-delivery.js';
import { ReleaseNote } from './release-note.entity.js';
import { releaseNoteExists } from './release-notes.exceptions.js';
import type { CreateReleaseNoteDto, ReleaseNotesQuery, UpdateReleaseNoteDto } from './release-notes.dto.js';
import { pageWindow } from '../common/pagination.js';
import { AppsRepository } from '../apps/apps.repository.js';

const releaseNoteNotFound = () => notFound('Release note');

/** Release notes per app and version: authored in the console, shown by the SDK after an update. */
@Injectable()
export class ReleaseNotesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly apps: AppsRepository,
  ) {}

  // ---- Console ----

  async list(auth: OrgAuthContext, query: ReleaseNotesQuery): Promise<{ items: ReleaseNote[]; total: number }> {
    const builder = this.dataSource
      .getRepository(ReleaseNote)
      .createQueryBuilder('release_notes')
      .where('release_notes.organization_id = :organizationId', { organizationId: auth.organizationId });
    if (query.appId) builder.andWhere('release_notes.app_id = :appId', { appId: query.appId });
    const { limit, offset } = pageWindow(query);
    const [items, total] = await builder
      .orderBy('release_notes.created_at', 'DESC')
      .addOrderBy('release_notes.id', 'DESC')
      .skip(offset)
      .take(limit)
      .getManyAndCount();
    return { items, total };
  }

  async get(auth: OrgAuthContext, noteId: string): Promise<ReleaseNote> {
    const note = await this.dataSource
      .getRepository(ReleaseNote)
      .findOneBy({ id: noteId, organizationId: auth.organizationId });
    if (!note) throw releaseNoteNotFound();
    return note;
  }

  async create(auth: OrgAuthContext, input: CreateReleaseNoteDto): Promise<ReleaseNote> {
    return this.dataSource.transaction(async (manager) => {
      await this.apps.assertExists(auth.organizationId, input.appId, { manager });
      const publishedAt = input.isPublished ? new Date() : null;
      const note = manager.create(ReleaseNote, {
        organizationId: auth.organizationId,
        appId: input.appId,
        version: input.version,
        versionKey: versionKey(input.version)!,
        title: input.title,
        body: input.body,
        isPublished: publishedAt !== null,
        publishedAt,
      });
      await this.saveUnique(manager, note);
      await this.record(manager, auth, 'release_note.created', note, { version: note.version, appId: note.appId });
      return note;
    });
  }

  async update(auth: OrgAuthContext, noteId: string, input: UpdateReleaseNoteDto): Promise<ReleaseNote> {
    if (input.version === undefined && input.title === undefined && input.body === undefined) {
      throw badRequest('Nothing to update', { hint: 'Send at least one of version, title, body' });
    }
    return this.dataSource.transaction(async (manager) => {
      const note = await this.lockedNote(manager, auth, noteId);
      if (input.version !== undefined) {
        note.version = input.version;
        note.versionKey = versionKey(input.version)!;
      }
      if (input.title !== undefined) note.title = input.title;
      if (input.body !== undefined) note.body = input.body;
      await this.saveUnique(manager, note);
      await this.record(manager, auth, 'release_note.updated', note, {
        fields: (['version', 'title', 'body'] as const).filter((field) => input[field] !== undefined),
      });
      return manager.findOneByOrFail(ReleaseNote, { id: noteId });
    });
  }

  /** Deletes the note; its view records go with it (foreign key cascade). */
  async remove(auth: OrgAuthContext, noteId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const note = await this.lockedNote(manager, auth, noteId);
      await manager.query(`DELETE FROM release_notes WHERE id = $1`, [noteId]);
      await this.record(manager, auth, 'release_note.deleted', note, { version: note.version, appId: note.appId });
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
    const notes = await this.dataSource
      .getRepository(ReleaseNote)
      .createQueryBuilder('release_notes')
      .where('release_notes.app_id = :appId AND release_notes.organization_id = :organizationId', {
        appId: tenant.appId,
        organizationId: tenant.organizationId,
      })
      .andWhere('release_notes.is_published')
      .andWhere(
        `NOT EXISTS (SELECT 1 FROM release_note_views v
                      WHERE v.release_note_id = release_notes.id AND v.device_id = :deviceId)`,
        { deviceId },
      )
      .getMany();
    return deliverableNotes(notes, installed, current);
  }

  /** Records that the device has seen the note; seeing it again changes nothing. */
  async markSeen(tenant: Tenant, deviceId: string, noteId: string): Promise<void> {
    const inserted = await queryRows<{ found: boolean }>(
      this.dataSource,
      `WITH note AS (SELECT id FROM release_notes WHERE id = $1 AND app_id = $2 AND organization_id = $3),
            seen AS (
              INSERT INTO release_note_views (release_note_id, organization_id, device_id)
              SELECT id, $3, $4 FROM note ON CONFLICT DO NOTHING RETURNING 1
            )
       SELECT EXISTS (SELECT 1 FROM note) AS found`,
      [noteId, tenant.appId, tenant.organizationId, deviceId],
    );
    if (!inserted[0]?.found) throw releaseNoteNotFound();
  }

  // ---- Shared ----

  private async setPublished(auth: OrgAuthContext, noteId: string, published: boolean): Promise<ReleaseNote> {
    return this.dataSource.transaction(async (manager) => {
      const note = await this.lockedNote(manager, auth, noteId);
      if (note.isPublished === published) return note;
      await manager.query(
        `UPDATE release_notes SET is_published = $2, published_at = CASE WHEN $2 THEN now() END, updated_at = now()
          WHERE id = $1`,
        [noteId, published],
      );
      await this.record(manager, auth, published ? 'release_note.published' : 'release_note.unpublished', note, {
        version: note.version,
      });
      return manager.findOneByOrFail(ReleaseNote, { id: noteId });
    });
  }

  private async saveUnique(manager: EntityManager, note: ReleaseNote): Promise<void> {
    try {
      await manager.save(note);
    } catch (error) {
      if (isUniqueViolation(error)) throw releaseNoteExists(note.version);
      throw error;
    }
  }

  private async lockedNote(manager: EntityManager, auth: OrgAuthContext, noteId: string): Promise<ReleaseNote> {
    const note = await manager.findOne(ReleaseNote, {
      where: { id: noteId, organizationId: auth.organizationId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!note) throw releaseNoteNotFound();
    return note;
  }

  private record(
    manager: EntityManager,
    auth: OrgAuthContext,
    action: string,
    note: ReleaseNote,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(
      auth,
      { organizationId: auth.organizationId, action, resourceType: 'release_note', resourceId: note.id, metadata },
      manager,
    );
  }
}
