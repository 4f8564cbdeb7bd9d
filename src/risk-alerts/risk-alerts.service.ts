import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { createLogger } from '../common/logging/logger.js';
import { tierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { MailService } from '../mail/mail.service.js';
import { DomainEvents } from '../common/domain-events/domain-events.js';
import type { AttestingApp, DeviceAnomalyDetected } from '../devices/device-domain-events.js';
import { DevicesRepository } from '../devices/devices.repository.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { PlanService } from '../organizations/plan.service.js';
import { riskAlertMail } from './risk-alert-mail.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { RiskAlertRulesRepository } from './risk-alert-rules.repository.js';
import {
  DEFAULT_WINDOW_MINUTES,
  describeAlert,
  inCooldown,
  ruleApplies,
  type AlertRule,
  type DeviceEventNotice,
} from './risk-alert-rule.js';

/** The app an event happened in; the attestation service's tenant is one. */
export interface AlertingApp extends AttestingApp {
  /** The organization's raw plan, as the tenant lookup last saw it. */
  serviceTier: string;
}

/** How long an instance trusts its copy of an organization's active rules. */
export const RULES_TTL_MS = 30_000;
const MAX_CACHED_ORGANIZATIONS = 10_000;

interface CachedRules {
  rules: Promise<AlertRule[]>;
  expiresAt: number;
}

/**
 * Evaluates the organizations' risk alert rules as device events arrive, off the attestation's
 * path. Cheap by construction: nothing at all below Business; the active rules of an organization
 * come from a short in-process cache (none: no query); an event only counts what a rule it could
 * trip needs, by indexed ranges of `device_events`; and a rule this instance knows is cooling down
 * costs nothing. The cooldown is claimed with one conditional UPDATE, so of any number of
 * concurrent evaluations on any number of instances one alert goes out per storm.
 */
@Injectable()
export class RiskAlertsService implements BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly cache = new Map<string, CachedRules>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly uow: UnitOfWork,
    private readonly rules: RiskAlertRulesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly devices: DevicesRepository,
    private readonly domainEvents: DomainEvents,
    private readonly mail: MailService,
    private readonly plans: PlanService,
    private readonly organizations: OrganizationsService,
  ) {
    this.logger = createLogger(config).child({ component: 'risk-alerts' });
  }

  /**
   * A device event was recorded (and committed). Returns at once; the evaluation runs in the
   * background, and its failures are logged, never thrown.
   */
  onDeviceEvent(app: AlertingApp, event: DeviceEventNotice): void {
    if (!tierDefinition(app.serviceTier).features.fraudDetection) return;
    const work = this.evaluate(app, event).catch((error: unknown) =>
      this.logger.error({ err: error, organizationId: app.organizationId }, 'risk alert evaluation failed'),
    );
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /** Drops this instance's copy of the organization's rules: they changed. */
  forget(organizationId: string): void {
    this.cache.delete(organizationId);
  }

  /** Resolves when no evaluation is under way: at shutdown, and for tests asserting on outcomes. */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.idle();
  }

  private async evaluate(app: AlertingApp, event: DeviceEventNotice): Promise<void> {
    const rules = await this.rulesOf(app.organizationId);
    for (const rule of rules) {
      if (!ruleApplies(rule, app.appId, event) || inCooldown(rule, new Date())) continue;
      const observed = await this.observe(rule, app, event);
      if (observed > rule.condition.threshold) await this.fire(rule, app, event, observed);
    }
  }

  /** The number the rule's threshold is compared with, counted by the devices' repository. */
  private async observe(rule: AlertRule, app: AlertingApp, event: DeviceEventNotice): Promise<number> {
    const window = rule.condition.windowMinutes ?? DEFAULT_WINDOW_MINUTES;
    switch (rule.condition.type) {
      case 'risk_score_above':
        return event.riskScore ?? 0;
      case 'failed_attestations_per_device':
        return this.devices.failuresOfKey(app.organizationId, app.appId, event.keyId, window);
      case 'failed_attestations_per_app':
        return this.devices.failuresOfApp(app.organizationId, app.appId, window);
      case 'new_devices_per_hour':
        // Devices whose first successful attestation falls in the window.
        return this.devices.newDevices(app.organizationId, rule.appId, window);
    }
  }

  /**
   * Claims the cooldown and, for the webhook channel, emits the alert as a
   * `DeviceAnomalyDetected` (pattern `alert_rule`) in the same unit of work.
   * A lost claim teaches this instance when the rule last fired, so it stops counting for it.
   */
  private async fire(rule: AlertRule, app: AlertingApp, event: DeviceEventNotice, observed: number): Promise<void> {
    const claimed = await this.uow.run(async () => {
      const claim = await this.rules.claimCooldown(app.organizationId, rule.id);
      rule.lastFiredAt = claim.claimedAt ?? claim.lastFiredAt;
      if (!claim.claimedAt) return false;
      if (rule.channel === 'webhook') {
        await this.domainEvents.emit([await this.anomalyOf(rule, app, event, observed)]);
      }
      return true;
    });
    if (!claimed) return;
    this.logger.info({ ruleId: rule.id, organizationId: rule.organizationId, observed }, 'risk alert fired');
    if (rule.channel === 'email') {
      const message = riskAlertMail({
        ruleName: rule.name,
        bundleId: app.bundleId,
        appId: app.appId,
        keyId: event.keyId,
        detail: describeAlert(rule, observed),
        cooldownMinutes: rule.cooldownMinutes,
        dashboardUrl: this.config.dashboardOrigins[0] ?? this.config.baseUrl,
      });
      for (const to of await this.organizations.adminAddresses(app.organizationId)) {
        await this.mail.send({ to, ...message });
      }
    }
  }

  /** The alert as a device anomaly; the event's score, when it was scored, wins over the stored one. */
  private async anomalyOf(
    rule: AlertRule,
    app: AlertingApp,
    event: DeviceEventNotice,
    observed: number,
  ): Promise<DeviceAnomalyDetected> {
    const stored = await this.devices.storedFacts(app.organizationId, app.appId, event.keyId);
    return {
      type: 'DeviceAnomalyDetected',
      app: { organizationId: app.organizationId, appId: app.appId, bundleId: app.bundleId },
      device: {
        keyId: event.keyId,
        clientDeviceId: stored?.client_device_id ?? null,
        riskScore: event.riskScore ?? stored?.risk_score ?? 0,
        jailbreakDetected: stored?.jailbreak_detected ?? false,
        deviceModel: stored?.device_model ?? null,
        osVersion: stored?.os_version ?? null,
      },
      pattern: 'alert_rule',
      errorCode: event.errorCode,
      detail: describeAlert(rule, observed),
      alert: {
        observed,
        rule: {
          id: rule.id,
          name: rule.name,
          appId: rule.appId,
          condition: {
            type: rule.condition.type,
            threshold: rule.condition.threshold,
            windowMinutes: rule.condition.windowMinutes,
          },
          cooldownMinutes: rule.cooldownMinutes,
        },
      },
    };
  }

  /** The organization's active rules, from this instance's cache when fresh. */
  private rulesOf(organizationId: OrganizationId): Promise<AlertRule[]> {
    const now = Date.now();
    const cached = this.cache.get(organizationId);
    if (cached && cached.expiresAt > now) return cached.rules;
    if (this.cache.size >= MAX_CACHED_ORGANIZATIONS) this.prune(now);
    const entry: CachedRules = { rules: this.load(organizationId), expiresAt: now + RULES_TTL_MS };
    this.cache.set(organizationId, entry);
    entry.rules.catch(() => {
      if (this.cache.get(organizationId) === entry) this.cache.delete(organizationId);
    });
    return entry.rules;
  }

  /** None on a plan without `fraudDetection` (saved rules wait for an upgrade). */
  private async load(organizationId: OrganizationId): Promise<AlertRule[]> {
    const plan = await this.plans.planOf(organizationId);
    if (!plan.features.fraudDetection) return [];
    return this.rules.list(organizationId, { activeOnly: true });
  }

  private prune(now: number): void {
    for (const [organizationId, entry] of this.cache) {
      if (entry.expiresAt <= now) this.cache.delete(organizationId);
    }
    // Still full of fresh entries: start over rather than grow without bound.
    if (this.cache.size >= MAX_CACHED_ORGANIZATIONS) this.cache.clear();
  }
}
