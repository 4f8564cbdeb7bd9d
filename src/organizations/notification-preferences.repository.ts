import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { NotificationPreferences } from './notification-preferences.entity.js';

/** The owner of `notification_preferences`: one row per organization, absent while every default holds. */
@Injectable()
export class NotificationPreferencesRepository {
  constructor(private readonly uow: UnitOfWork) {}

  find(organizationId: OrganizationId): Promise<NotificationPreferences | null> {
    return this.uow.manager().getRepository(NotificationPreferences).findOneBy({ organizationId });
  }

  /** The organization's row (created with the defaults when missing), locked until the unit of work ends. */
  async lock(organizationId: OrganizationId): Promise<NotificationPreferences> {
    const manager = this.uow.manager();
    await manager.query(
      `INSERT INTO notification_preferences (organization_id) VALUES ($1) ON CONFLICT (organization_id) DO NOTHING`,
      [organizationId],
    );
    return manager.findOneOrFail(NotificationPreferences, {
      where: { organizationId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async update(organizationId: OrganizationId, changes: Partial<NotificationPreferences>): Promise<void> {
    await this.uow.manager().update(NotificationPreferences, { organizationId }, changes);
  }
}
