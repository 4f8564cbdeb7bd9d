import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { AuditService } from '../audit/audit.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { NotificationPreferences } from './notification-preferences.entity.js';
import { NotificationPreferencesRepository } from './notification-preferences.repository.js';

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
    private readonly uow: UnitOfWork,
    private readonly preferences: NotificationPreferencesRepository,
    private readonly audit: AuditService,
  ) {}

  /** The preferences in force; a plain `string` id serves callers that do not hold a branded one yet. */
  async get(organizationId: OrganizationId): Promise<Preferences> {
    const row = await this.preferences.find(organizationId);
    return row ? pickPreferences(row) : { ...DEFAULT_PREFERENCES };
  }

  /** A partial update: fields left out keep their values. Answers the full preferences. */
  async update(auth: OrgAuthContext, changes: Partial<Preferences>): Promise<Preferences> {
    const given = PREFERENCE_FIELDS.filter((field) => changes[field] !== undefined);
    if (!given.length) return this.get(auth.organizationId);
    return this.uow.run(async () => {
      const current = await this.preferences.lock(auth.organizationId);
      const changed = given.filter((field) => current[field] !== changes[field]);
      if (!changed.length) return pickPreferences(current);
      const update = Object.fromEntries(changed.map((field) => [field, changes[field]])) as Partial<Preferences>;
      await this.preferences.update(auth.organizationId, update);
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'notification_preferences.updated',
        resourceType: 'notification_preferences',
        resourceId: auth.organizationId,
        metadata: {
          changes: Object.fromEntries(changed.map((field) => [field, { from: current[field], to: changes[field] }])),
        },
      });
      return { ...pickPreferences(current), ...update };
    });
  }
}

function pickPreferences(row: Preferences): Preferences {
  return Object.fromEntries(PREFERENCE_FIELDS.map((field) => [field, row[field]])) as Preferences;
}
