import type { OrganizationId } from '../common/access/tenant-id.js';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { createLogger } from '../common/logging/logger.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { MailService } from '../mail/mail.service.js';
import { renderMail } from '../mail/mail-templates.js';
import { NotificationPreferencesService } from '../organizations/notification-preferences.service.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { MadRepository } from './mad.repository.js';

/** Alert levels, in percent of the plan's MAD limit. */
export const USAGE_ALERT_LEVELS = [80, 100] as const;

/**
 * Mails Admins and Owners when monthly active devices cross 80% and 100% of the plan, once per
 * level and period (the counter row remembers which were sent), when the organization's
 * `usageAlert` preference is on.
 */
@Injectable()
export class UsageAlertsService {
  private readonly logger;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly counters: MadRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly mail: MailService,
    private readonly preferences: NotificationPreferencesService,
    private readonly organizations: OrganizationsService,
  ) {
    this.logger = createLogger(config).child({ component: 'usage-alerts' });
  }

  /** Called after a device was counted; never throws, never delays the attestation's answer. */
  notify(organizationId: OrganizationId, periodStart: string, current: number, limit: number | null): void {
    if (limit === null) return;
    const level = [...USAGE_ALERT_LEVELS].reverse().find((candidate) => current * 100 >= candidate * limit);
    if (!level) return;
    // Outside the attestation's unit of work: the claim waits for it to end, so it sees the commit.
    void this.uow
      .outside(() => this.send(organizationId, periodStart, level, current, limit))
      .catch((error: unknown) => this.logger.error({ err: error, organizationId }, 'usage alert failed'));
  }

  private async send(
    organizationId: OrganizationId,
    periodStart: string,
    level: number,
    current: number,
    limit: number,
  ) {
    // Claims the level atomically: of many concurrent attestations, one sends the alert.
    if (!(await this.counters.claimAlert(organizationId, periodStart, level))) return;
    if (!(await this.preferences.get(organizationId)).usageAlert) return;
    const message = renderMail({
      subject:
        level >= 100
          ? 'Your monthly active device limit is reached'
          : `You have used ${level}% of your monthly active devices`,
      heading: level >= 100 ? 'Monthly active device limit reached' : `${level}% of your monthly active devices used`,
      paragraphs: [
        `${current} of the ${limit} monthly active devices your plan includes have attested this billing period.`,
        level >= 100
          ? 'New devices are still admitted for a 7-day grace period; after it, only devices already active keep working until the period resets or you upgrade.'
          : 'At 100%, new devices get a 7-day grace period, after which only devices already active keep working.',
      ],
      action: { label: 'Review your plan', url: `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/billing` },
    });
    for (const to of await this.organizations.adminAddresses(organizationId)) this.mail.sendLater({ to, ...message });
  }
}
