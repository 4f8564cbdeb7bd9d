import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { AuditService } from '../audit/audit.service.js';
import { NotificationPreferences } from './notification-preferences.entity.js';

export const PREFERENCE_FIELDS = [
  'newFeatureRequest',
  'featureVoteThreshold',
  'featureVoteThresholdCount',
  'featureStatusChange',
  'newSupportTicket',
  'ticketAdminReply',
  'ticketResolved',
  'ticketUserReply',
  'flagToggle',
  'teamInvite',
  'usageAlert',
] as const;
export type PreferenceField = (typeof PREFERENCE_FIELDS)[number];
export type Preferences = Pick<NotificationPreferences, PreferenceField>;

/** Every notification is on until an Admin turns it off; the vote threshold starts at 10. */
export const DEFAULT_PREFERENCES: Readonly<Preferences> = {
  newFeatureRequest: true,
  featureVoteThreshold: true,
  featureVoteThresholdCount: 10,
  featureStatusChange: true,
  newSupportTicket: true,
  ticketAdminReply: true,
  ticketResolved: true,
  ticketUserReply: true,
  flagToggle: true,
  teamInvite: true,
  usageAlert: true,
};

/** Which notifications an organization wants; other features read them before notifying. */
@Injectable()
export class NotificationPreferencesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
  ) {}

  async get(organizationId: string): Promise<Preferences> {
    const row = await this.dataSource.getRepository(NotificationPreferences).findOneBy({ organizationId });
    return row ? pickPreferences(row) : { ...DEFAULT_PREFERENCES };
  }

  /** A partial update: fields left out keep their values. Answers the full preferences. */
  async update(auth: OrgAuthContext, changes: Partial<Preferences>): Promise<Preferences> {
    const given = PREFERENCE_FIELDS.filter((field) => changes[field] !== undefined);
    if (!given.length) return this.get(auth.organizationId);
    return this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO notification_preferences (organization_id) VALUES ($1) ON CONFLICT (organization_id) DO NOTHING`,
        [auth.organizationId],
      );
      const current = await manager.findOneOrFail(NotificationPreferences, {
        where: { organizationId: auth.organizationId },
        lock: { mode: 'pessimistic_write' },
      });
      const changed = given.filter((field) => current[field] !== changes[field]);
      if (!changed.length) return pickPreferences(current);
      const update = Object.fromEntries(changed.map((field) => [field, changes[field]])) as Partial<Preferences>;
      await manager.update(NotificationPreferences, { organizationId: auth.organizationId }, update);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'notification_preferences.updated',
          resourceType: 'notification_preferences',
          resourceId: auth.organizationId,
          metadata: {
            changes: Object.fromEntries(changed.map((field) => [field, { from: current[field], to: changes[field] }])),
          },
        },
        manager,
      );
      return { ...pickPreferences(current), ...update };
    });
  }
}

function pickPreferences(row: Preferences): Preferences {
  return Object.fromEntries(PREFERENCE_FIELDS.map((field) => [field, row[field]])) as Preferences;
}
