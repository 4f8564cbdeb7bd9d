import { Injectable } from '@nestjs/common';
import type { Tenant } from '../apps/tenant-resolver.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { pageWindow, type PageQuery } from '../common/pagination.js';
import { queryRows } from '../database/sql.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { ReleaseNote } from './release-note.entity.js';
import { releaseNoteExists } from './release-notes.exceptions.js';

/** A new note's fields. */
export interface NewReleaseNote {
  appId: string;
  version: string;
  versionKey: string;
  title: string;
  body: string;
  publishedAt: Date | null;
}

/** The changed fields of a note (absent: unchanged). */
export interface ReleaseNotePatch {
  version?: string;
  versionKey?: string;
  title?: string;
  body?: string;
}

/**
 * The owner of `release_notes` and `release_note_views`. Console methods take the caller's
 * organization; the SDK's take the tenant the SDK's tenant resolver established (its app and
 * organization), so a note of another app or organization is as unknown as a missing one.
 */
@Injectable()
export class ReleaseNotesRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** One page of the organization's notes (of one app when `appId` is given), newest first. */
  async page(
    organizationId: OrganizationId,
    query: PageQuery & { appId?: string },
  ): Promise<{ items: ReleaseNote[]; total: number }> {
    const builder = this.uow
      .manager()
      .getRepository(ReleaseNote)
      .createQueryBuilder('release_notes')
      .where('release_notes.organization_id = :organizationId', { organizationId });
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

  /** The note, or null when the organization has none with this id; `lock` holds it FOR UPDATE. */
  find(organizationId: OrganizationId, noteId: string, options: { lock?: boolean } = {}): Promise<ReleaseNote | null> {
    return this.uow
      .manager()
      .getRepository(ReleaseNote)
      .findOne({
        where: { id: noteId, organizationId },
        ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
      });
  }

  /** Inserts the note; 409 `release_note_exists` when the app has a note for this version. */
  async insert(organizationId: OrganizationId, fields: NewReleaseNote): Promise<ReleaseNote> {
    const repository = this.uow.manager().getRepository(ReleaseNote);
    const note = repository.create({ ...fields, organizationId, isPublished: fields.publishedAt !== null });
    await this.saveUnique(() => repository.save(note), fields.version);
    return note;
  }

  /** Applies `patch` and answers the note as stored; 409 `release_note_exists` on a taken version. */
  async update(organizationId: OrganizationId, noteId: string, patch: ReleaseNotePatch): Promise<ReleaseNote> {
    const repository = this.uow.manager().getRepository(ReleaseNote);
    const note = await repository.findOneByOrFail({ id: noteId, organizationId });
    Object.assign(note, patch);
    await this.saveUnique(() => repository.save(note), note.version);
    return repository.findOneByOrFail({ id: noteId, organizationId });
  }

  /** Publishes (stamping now) or unpublishes the note; answers it as stored. */
  async setPublished(organizationId: OrganizationId, noteId: string, published: boolean): Promise<ReleaseNote> {
    const manager = this.uow.manager();
    await manager.query(
      `UPDATE release_notes SET is_published = $3, published_at = CASE WHEN $3 THEN now() END, updated_at = now()
        WHERE id = $1 AND organization_id = $2`,
      [noteId, organizationId, published],
    );
    return manager.getRepository(ReleaseNote).findOneByOrFail({ id: noteId, organizationId });
  }

  /** Deletes the note; its view records go with it (foreign key cascade). */
  async remove(organizationId: OrganizationId, noteId: string): Promise<void> {
    await this.uow
      .manager()
      .query(`DELETE FROM release_notes WHERE id = $1 AND organization_id = $2`, [noteId, organizationId]);
  }

  /** The app's published notes the device has not seen. */
  unseenPublished(tenant: Tenant, deviceId: string): Promise<ReleaseNote[]> {
    return this.uow
      .manager()
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
  }

  /** Records that the device has seen the app's note (again: no change); false when the app has no such note. */
  async markSeen(tenant: Tenant, deviceId: string, noteId: string): Promise<boolean> {
    const rows = await queryRows<{ found: boolean }>(
      this.uow.manager(),
      `WITH note AS (SELECT id FROM release_notes WHERE id = $1 AND app_id = $2 AND organization_id = $3),
            seen AS (
              INSERT INTO release_note_views (release_note_id, organization_id, device_id)
              SELECT id, $3, $4 FROM note ON CONFLICT DO NOTHING RETURNING 1
            )
       SELECT EXISTS (SELECT 1 FROM note) AS found`,
      [noteId, tenant.appId, tenant.organizationId, deviceId],
    );
    return rows[0]?.found === true;
  }

  private async saveUnique(save: () => Promise<unknown>, version: string): Promise<void> {
    try {
      await save();
    } catch (error) {
      if (isUniqueViolation(error)) throw releaseNoteExists(version);
      throw error;
    }
  }
}
