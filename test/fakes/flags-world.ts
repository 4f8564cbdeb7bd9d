import type { AppConfig } from '../../src/config/app-config.js';
import { ChangeRequestsService } from '../../src/flags/change-requests.service.js';
import { FlagSchedulesService } from '../../src/flags/flag-schedules.service.js';
import type { FlagStore } from '../../src/flags/flag-store.js';
import { FlagsService } from '../../src/flags/flags.service.js';
import type { MailService } from '../../src/mail/mail.service.js';
import type { NotificationPreferencesService } from '../../src/organizations/notification-preferences.service.js';
import type { OrganizationsService } from '../../src/organizations/organizations.service.js';
import type { FlagWebhookData, WebhookEvents } from '../../src/webhooks/webhook-events.js';
import { RecordedAudit } from './audit-entries.js';
import {
  FakeChangeRequestsRepository,
  FakeFlagSchedulesRepository,
  FakeFlagStoreRepository,
  FakeFlagsRepository,
  FakeSavepoints,
  type Restorable,
} from './flags.js';
import { KnownApps } from './known-apps.js';
import { FixedPlans } from './plans.js';
import { FakeUnitOfWork } from './unit-of-work.js';

/** The flag webhook events announced, in order. */
export class RecordedWebhooks implements Pick<WebhookEvents, 'announceFlagChange'>, Restorable {
  events: { organizationId: string; kind: string; data: FlagWebhookData }[] = [];

  announceFlagChange(organizationId: string, kind: 'created' | 'updated' | 'deleted', data: FlagWebhookData) {
    this.events.push({ organizationId, kind, data });
    return Promise.resolve();
  }

  saveState(): () => void {
    const length = this.events.length;
    return () => void this.events.splice(length);
  }
}

/**
 * FlagsService, FlagSchedulesService and ChangeRequestsService wired to in-memory fakes of their
 * repositories, with the plans, apps, audit log and webhook events they use, and the mails
 * and cache invalidations they cause after commit.
 */
export function flagsWorld() {
  const uow = new FakeUnitOfWork();
  const flags = new FakeFlagsRepository();
  const schedules = new FakeFlagSchedulesRepository();
  const requests = new FakeChangeRequestsRepository(flags);
  const storeChanges = new FakeFlagStoreRepository();
  const audit = new RecordedAudit();
  const webhooks = new RecordedWebhooks();
  const savepoints = new FakeSavepoints([flags, schedules, requests, audit, webhooks]);
  const plans = new FixedPlans();
  const apps = new KnownApps();
  const invalidated: string[] = [];
  const mails: { to: string; subject: string }[] = [];
  const store = { invalidate: (appId: string) => void invalidated.push(appId) } as unknown as FlagStore;
  const mail = {
    sendLater: (message: { to: string; subject: string }) => void mails.push(message),
  } as unknown as MailService;
  const config = {
    logLevel: 'silent',
    dashboardOrigins: ['https://console.example'],
    baseUrl: '',
  } as unknown as AppConfig;
  const preferences = { get: () => Promise.resolve({ flagToggle: true }) } as unknown as NotificationPreferencesService;
  const organizations = {
    adminAddresses: () => Promise.resolve(['admin@example.com']),
  } as unknown as OrganizationsService;
  const flagsService = new FlagsService(
    uow.asUnitOfWork(),
    flags as never,
    schedules as never,
    storeChanges as never,
    audit.asAuditService(),
    store,
    webhooks as unknown as WebhookEvents,
    mail,
    config,
    plans.asPlanService(),
    apps.asAppsRepository(),
    preferences,
    organizations,
  );
  const schedulesService = new FlagSchedulesService(
    uow.asUnitOfWork(),
    schedules as never,
    savepoints as never,
    flagsService,
    audit.asAuditService(),
    plans.asPlanService(),
  );
  const changeRequests = new ChangeRequestsService(
    uow.asUnitOfWork(),
    requests as never,
    flags as never,
    savepoints as never,
    flagsService,
    schedulesService,
    audit.asAuditService(),
    plans.asPlanService(),
  );
  return {
    uow,
    flags,
    schedules,
    requests,
    storeChanges,
    audit,
    webhooks,
    plans,
    apps,
    invalidated,
    mails,
    flagsService,
    schedulesService,
    changeRequests,
  };
}
