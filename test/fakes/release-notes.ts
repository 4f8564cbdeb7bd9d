import { randomUUID } from 'node:crypto';
import type { Tenant } from '../../src/apps/tenant-resolver.js';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { PageQuery } from '../../src/common/pagination.js';
import { ReleaseNote } from '../../src/release-notes/release-note.entity.js';
import { releaseNoteExists } from '../../src/release-notes/release-notes.exceptions.js';
import type {
  NewReleaseNote,
  ReleaseNotePatch,
  ReleaseNotesRepository,
} from '../../src/release-notes/release-notes.repository.js';

/** `release_notes` and `release_note_views` in memory. */
export class FakeReleaseNotesRepository implements Pick<ReleaseNotesRepository, keyof ReleaseNotesRepository> {
  readonly notes = new Map<string, ReleaseNote>();
  readonly views = new Set<string>();

  page(organizationId: OrganizationId, query: PageQuery & { appId?: string }) {
    const items = [...this.notes.values()]
      .filter((note) => note.organizationId === organizationId && (!query.appId || note.appId === query.appId))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    const start = (query.page - 1) * query.per;
    return Promise.resolve({ items: items.slice(start, start + query.per).map(copy), total: items.length });
  }

  find(organizationId: OrganizationId, noteId: string) {
    const note = this.notes.get(noteId);
    return Promise.resolve(note && note.organizationId === organizationId ? copy(note) : null);
  }

  insert(organizationId: OrganizationId, fields: NewReleaseNote) {
    this.assertFree(fields.appId, fields.versionKey, null, fields.version);
    const now = new Date();
    const note = Object.assign(new ReleaseNote(), {
      ...fields,
      id: randomUUID(),
      organizationId,
      isPublished: fields.publishedAt !== null,
      createdAt: now,
      updatedAt: now,
    });
    this.notes.set(note.id, note);
    return Promise.resolve(copy(note));
  }

  update(organizationId: OrganizationId, noteId: string, patch: ReleaseNotePatch) {
    const note = this.owned(organizationId, noteId);
    const next = { ...note, ...patch };
    this.assertFree(note.appId, next.versionKey, noteId, next.version);
    Object.assign(note, patch, { updatedAt: new Date() });
    return Promise.resolve(copy(note));
  }

  setPublished(organizationId: OrganizationId, noteId: string, published: boolean) {
    const note = this.owned(organizationId, noteId);
    note.isPublished = published;
    note.publishedAt = published ? new Date() : null;
    return Promise.resolve(copy(note));
  }

  remove(organizationId: OrganizationId, noteId: string) {
    this.owned(organizationId, noteId);
    this.notes.delete(noteId);
    for (const view of this.views) if (view.startsWith(`${noteId}/`)) this.views.delete(view);
    return Promise.resolve();
  }

  unseenPublished(tenant: Tenant, deviceId: string) {
    return Promise.resolve(
      [...this.notes.values()]
        .filter(
          (note) =>
            note.appId === tenant.appId &&
            note.organizationId === tenant.organizationId &&
            note.isPublished &&
            !this.views.has(`${note.id}/${deviceId}`),
        )
        .map(copy),
    );
  }

  markSeen(tenant: Tenant, deviceId: string, noteId: string) {
    const note = this.notes.get(noteId);
    if (!note || note.appId !== tenant.appId || note.organizationId !== tenant.organizationId) {
      return Promise.resolve(false);
    }
    this.views.add(`${noteId}/${deviceId}`);
    return Promise.resolve(true);
  }

  private owned(organizationId: string, noteId: string): ReleaseNote {
    const note = this.notes.get(noteId);
    if (!note || note.organizationId !== organizationId) throw new Error(`no note ${noteId} in ${organizationId}`);
    return note;
  }

  private assertFree(appId: string, versionKey: string, except: string | null, version: string): void {
    for (const note of this.notes.values()) {
      if (note.appId === appId && note.versionKey === versionKey && note.id !== except)
        throw releaseNoteExists(version);
    }
  }
}

const copy = (note: ReleaseNote): ReleaseNote => Object.assign(new ReleaseNote(), note);
