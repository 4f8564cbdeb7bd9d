import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import { NotificationPreferences } from '../../src/organizations/notification-preferences.entity.js';
import type { NotificationPreferencesRepository } from '../../src/organizations/notification-preferences.repository.js';
import { DEFAULT_PREFERENCES } from '../../src/organizations/notification-preferences.service.js';

type Public<T> = { [K in keyof T]: T[K] };

/** notification_preferences in memory: a row per organization once anything was saved. */
export class FakeNotificationPreferencesRepository implements Public<NotificationPreferencesRepository> {
  readonly rows = new Map<string, NotificationPreferences>();

  find(organizationId: string): Promise<NotificationPreferences | null> {
    const row = this.rows.get(organizationId);
    return Promise.resolve(row ? Object.assign(new NotificationPreferences(), row) : null);
  }

  lock(organizationId: OrganizationId): Promise<NotificationPreferences> {
    if (!this.rows.has(organizationId))
      this.rows.set(
        organizationId,
        Object.assign(new NotificationPreferences(), { organizationId, ...DEFAULT_PREFERENCES }),
      );
    return Promise.resolve(Object.assign(new NotificationPreferences(), this.rows.get(organizationId)));
  }

  update(organizationId: OrganizationId, changes: Partial<NotificationPreferences>): Promise<void> {
    const row = this.rows.get(organizationId);
    if (row) Object.assign(row, changes);
    return Promise.resolve();
  }
}
