import type { OrganizationId } from '../common/access/tenant-id.js';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { MailMessage } from '../mail/mail-templates.js';
import { MailService } from '../mail/mail.service.js';
import {
  NotificationPreferencesService,
  type PreferenceField,
} from '../organizations/notification-preferences.service.js';
import { OrganizationsService } from '../organizations/organizations.service.js';

/** What a notice needs to know about the organization it is about. */
export interface NoticeContext {
  readonly organizationName: string;
  /** The dashboard's address, for links to the request or ticket. */
  readonly dashboardUrl: string;
}

/**
 * The mails feedback and support send, each governed by one notification preference of the
 * organization. They go out after the change that caused them has committed, never delay the
 * answer and never fail it (failures are logged).
 */
@Injectable()
export class StaffNotices {
  private readonly logger: Logger;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly mail: MailService,
    private readonly preferences: NotificationPreferencesService,
    private readonly organizations: OrganizationsService,
  ) {
    this.logger = createLogger(config).child({ component: 'staff-notices' });
  }

  /** Mails the organization's Admins and Owners when `preference` is on. */
  toAdmins(
    organizationId: OrganizationId,
    preference: PreferenceField,
    build: (context: NoticeContext) => MailMessage,
  ): void {
    this.run(organizationId, preference, async (context) => {
      const message = build(context);
      for (const to of await this.organizations.adminAddresses(organizationId))
        await this.mail.send({ to, ...message });
    });
  }

  /** Mails one address (an end user's) when `preference` is on. */
  toAddress(
    organizationId: OrganizationId,
    preference: PreferenceField,
    to: string,
    build: (context: NoticeContext) => MailMessage,
  ): void {
    this.run(organizationId, preference, (context) => this.mail.send({ to, ...build(context) }));
  }

  /** Mails Admins and Owners without consulting a preference: the caller already did. */
  toAdminsNow(organizationId: OrganizationId, build: (context: NoticeContext) => MailMessage): void {
    void this.context(organizationId)
      .then(async (context) => {
        if (!context) return;
        const message = build(context);
        for (const to of await this.organizations.adminAddresses(organizationId))
          await this.mail.send({ to, ...message });
      })
      .catch((error: unknown) => this.logger.error({ err: error, organizationId }, 'notice failed'));
  }

  private run(
    organizationId: OrganizationId,
    preference: PreferenceField,
    send: (context: NoticeContext) => Promise<void>,
  ) {
    void (async () => {
      const preferences = await this.preferences.get(organizationId);
      if (preferences[preference] !== true) return;
      const context = await this.context(organizationId);
      if (context) await send(context);
    })().catch((error: unknown) => this.logger.error({ err: error, organizationId, preference }, 'notice failed'));
  }

  private async context(organizationId: OrganizationId): Promise<NoticeContext | null> {
    const organization = await this.organizations.find(organizationId);
    if (!organization) return null;
    return {
      organizationName: organization.name,
      dashboardUrl: this.config.dashboardOrigins[0] ?? this.config.baseUrl,
    };
  }
}
