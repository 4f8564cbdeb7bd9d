import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { trustAppId, type OrganizationId } from '../common/access/tenant-id.js';
import type { DeviceAnomalyDetected } from '../devices/device-domain-events.js';
import { testConfig } from '../../test/fakes/config.js';
import { FakeDeviceEvents } from '../../test/fakes/devices.js';
import { RecordedDomainEvents } from '../../test/fakes/domain-events.js';
import { FakeMail } from '../../test/fakes/mail.js';
import { fakeOrganizations } from '../../test/fakes/organizations.js';
import { FixedPlans } from '../../test/fakes/plans.js';
import { FakeRiskAlertRules } from '../../test/fakes/risk-alert-rules.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import type { RiskAlertRulesRepository, RuleFields } from './risk-alert-rules.repository.js';
import { RiskAlertsService, type AlertingApp } from './risk-alerts.service.js';

const MINUTE = 60_000;

/**
 * An organization on Business (fraud detection) with two apps, its Owner, and the evaluation over
 * fakes: `instance()` is one more service instance sharing the same database.
 */
function world() {
  const rules = new FakeRiskAlertRules();
  const devices = new FakeDeviceEvents();
  const events = new RecordedDomainEvents();
  const mail = new FakeMail();
  const { organizations, repository, users } = fakeOrganizations();
  const owner = users.add('owner@example.com');
  const org = repository.seed({ tier: 'professional', owner });
  const plans = new FixedPlans().set(org.id, 'professional');
  const instance = () =>
    new RiskAlertsService(
      new FakeUnitOfWork().asUnitOfWork(),
      rules as unknown as RiskAlertRulesRepository,
      testConfig,
      devices.asDevicesRepository(),
      events.asDomainEvents(),
      mail.asMailService(),
      plans.asPlanService(),
      organizations,
    );
  const appOf = (organizationId: OrganizationId, bundleId: string): AlertingApp => ({
    organizationId,
    appId: trustAppId(randomUUID()),
    bundleId,
    serviceTier: 'professional',
  });
  return {
    rules,
    devices,
    mail,
    plans,
    repository,
    users,
    org: org.id,
    app: appOf(org.id, 'com.example.notes'),
    otherApp: appOf(org.id, 'com.example.other'),
    appOf,
    alerts: instance(),
    instance,
    /** The alerts written for webhooks, oldest first. */
    alerted: () => events.emitted as DeviceAnomalyDetected[],
    rule: (fields: Partial<RuleFields> = {}, organizationId: OrganizationId = org.id) =>
      rules.insert(organizationId, {
        appId: null,
        name: 'Failure storm',
        condition: { type: 'failed_attestations_per_app', threshold: 3, windowMinutes: 10 },
        channel: 'webhook',
        cooldownMinutes: 30,
        isActive: true,
        ...fields,
      }),
  };
}

type World = ReturnType<typeof world>;

/** `times` failed attestations of the app, one after another, each evaluated before the next. */
async function fail(
  w: World,
  times: number,
  options: { app?: AlertingApp; keyId?: string; alerts?: RiskAlertsService } = {},
) {
  const app = options.app ?? w.app;
  const alerts = options.alerts ?? w.alerts;
  for (let i = 0; i < times; i++) {
    const keyId = options.keyId ?? randomUUID();
    alerts.onDeviceEvent(app, w.devices.record(app, { keyId, result: 'failure' }));
    await alerts.idle();
  }
}

/** A successful attestation of `keyId`, evaluated. */
async function attest(
  w: World,
  keyId: string,
  options: { app?: AlertingApp; riskScore?: number; jailbreak?: boolean } = {},
) {
  const app = options.app ?? w.app;
  w.alerts.onDeviceEvent(app, w.devices.record(app, { keyId, result: 'success', ...options }));
  await w.alerts.idle();
}

/** Moves the rule's last alert `minutes` into the past, and has the instance reread its rules, as the e2e test does. */
function ageLastAlert(w: World, ruleId: string, minutes: number) {
  const stored = w.rules.rules.get(ruleId)!;
  stored.lastFiredAt = new Date(stored.lastFiredAt!.getTime() - minutes * MINUTE);
  w.alerts.forget(w.org);
}

describe('RiskAlertsService', () => {
  it('fires once when failures of the app rise above the threshold, naming the rule and what it observed', async () => {
    const w = world();
    const rule = await w.rule();
    await fail(w, 3);
    expect(w.alerted()).toEqual([]);
    await fail(w, 5);
    expect(w.alerted()).toHaveLength(1);
    expect(w.alerted()[0]).toMatchObject({
      type: 'DeviceAnomalyDetected',
      pattern: 'alert_rule',
      app: { organizationId: w.org, appId: w.app.appId, bundleId: 'com.example.notes' },
      errorCode: 'rp_id_mismatch',
      detail: '4 failed attestations of the app within 10 minutes, above 3',
      alert: {
        observed: 4,
        rule: {
          id: rule.id,
          name: 'Failure storm',
          appId: null,
          condition: { type: 'failed_attestations_per_app', threshold: 3, windowMinutes: 10 },
          cooldownMinutes: 30,
        },
      },
    });
    expect(w.rules.rules.get(rule.id)!.lastFiredAt).toEqual(expect.any(Date));
  });

  it("counts only the failures within the rule's window", async () => {
    const w = world();
    await w.rule();
    for (let i = 0; i < 3; i++) w.devices.record(w.app, { keyId: `old-${i}`, result: 'failure' }, 11);
    await fail(w, 3);
    expect(w.alerted()).toEqual([]);
    await fail(w, 1);
    expect(w.alerted().map((alert) => alert.alert?.observed)).toEqual([4]);
  });

  it('stays quiet during the cooldown however long the storm, and alerts once more after it', async () => {
    const w = world();
    const rule = await w.rule({ cooldownMinutes: 30 });
    await fail(w, 4);
    expect(w.alerted()).toHaveLength(1);
    ageLastAlert(w, rule.id, 29);
    await fail(w, 2);
    expect(w.alerted()).toHaveLength(1);
    ageLastAlert(w, rule.id, 2);
    await fail(w, 1);
    expect(w.alerted()).toHaveLength(2);
    expect(w.alerted()[1].alert?.observed).toBe(7);
  });

  it('sends one alert for a storm evaluated by two instances, though each read the rule before it fired', async () => {
    const w = world();
    await w.rule({ condition: { type: 'failed_attestations_per_app', threshold: 1, windowMinutes: 10 } });
    const peer = w.instance();
    // This instance reads the rule on a failure below the threshold; the peer's next one fires it.
    await fail(w, 1);
    await fail(w, 1, { alerts: peer });
    expect(w.alerted()).toHaveLength(1);
    // This instance still holds the rule as never fired: its evaluations lose the claim.
    await fail(w, 3);
    expect(w.alerted()).toHaveLength(1);
  });

  it('counts failures of one device key for a per-device rule: many devices failing once each trip nothing', async () => {
    const w = world();
    await w.rule({
      name: 'One device hammering',
      condition: { type: 'failed_attestations_per_device', threshold: 2, windowMinutes: 15 },
    });
    await fail(w, 4);
    expect(w.alerted()).toEqual([]);
    await fail(w, 3, { keyId: 'hammering-key' });
    expect(w.alerted()).toEqual([
      expect.objectContaining({
        device: expect.objectContaining({ keyId: 'hammering-key' }),
        detail: '3 failed attestations of one device within 15 minutes, above 2',
      }),
    ]);
  });

  it('mails an email rule to the active Admins and Owners only, with the device key and what was observed, and writes no webhook event', async () => {
    const w = world();
    const member = (email: string, role: 'admin' | 'member' | 'viewer', status?: 'disabled') => {
      const id = w.users.add(email, { status });
      w.repository.join(w.org, id, role);
    };
    member('admin@example.com', 'admin');
    member('member@example.com', 'member');
    member('viewer@example.com', 'viewer');
    member('gone@example.com', 'admin', 'disabled');
    await w.rule({
      name: 'One device hammering',
      condition: { type: 'failed_attestations_per_device', threshold: 2, windowMinutes: 15 },
      channel: 'email',
    });
    await fail(w, 5, { keyId: 'hammering-key' });
    expect(w.mail.sent.map((mail) => mail.to).sort()).toEqual(['admin@example.com', 'owner@example.com']);
    for (const mail of w.mail.sent) {
      expect(mail.subject).toBe('Risk alert: One device hammering');
      expect(mail.text).toContain('hammering-key');
      expect(mail.text).toContain('3 failed attestations of one device within 15 minutes, above 2');
    }
    expect(w.alerted()).toEqual([]);
  });

  it('fires for a risk score above its threshold, in the app it is scoped to only', async () => {
    const w = world();
    await w.rule({
      name: 'Risky',
      appId: w.app.appId,
      condition: { type: 'risk_score_above', threshold: 30, windowMinutes: null },
    });
    await attest(w, 'other-app-key', { app: w.otherApp, riskScore: 40, jailbreak: true });
    await attest(w, 'at-threshold', { riskScore: 30 });
    expect(w.alerted()).toEqual([]);
    await attest(w, 'jailbroken', { riskScore: 40, jailbreak: true });
    expect(w.alerted()).toEqual([
      expect.objectContaining({
        errorCode: null,
        device: expect.objectContaining({ keyId: 'jailbroken', riskScore: 40, jailbreakDetected: true }),
        alert: expect.objectContaining({ observed: 40, rule: expect.objectContaining({ appId: w.app.appId }) }),
      }),
    ]);
  });

  it('fires for new devices above the hourly threshold, a key attesting again being no new device', async () => {
    const w = world();
    await w.rule({ name: 'Device wave', condition: { type: 'new_devices_per_hour', threshold: 2, windowMinutes: 60 } });
    await attest(w, 'first');
    await attest(w, 'first');
    await attest(w, 'second');
    expect(w.alerted()).toEqual([]);
    await attest(w, 'third');
    expect(w.alerted()).toEqual([
      expect.objectContaining({
        detail: '3 new devices within 60 minutes, above 2',
        alert: expect.objectContaining({ observed: 3 }),
      }),
    ]);
  });

  it("ignores inactive rules and another organization's rules", async () => {
    const w = world();
    const inactive = await w.rule({ isActive: false });
    const stranger = w.repository.seed({ tier: 'professional' }).id;
    w.plans.set(stranger, 'professional');
    const theirs = await w.rule({}, stranger);
    await fail(w, 6);
    expect(w.alerted()).toEqual([]);
    expect(w.rules.rules.get(inactive.id)!.lastFiredAt).toBeNull();
    expect(w.rules.rules.get(theirs.id)!.lastFiredAt).toBeNull();
  });

  it('ignores an organization without fraud detection, as its app knows it or as its plan now says, keeping its rules for an upgrade', async () => {
    const w = world();
    const rule = await w.rule();
    await fail(w, 6, { app: { ...w.app, serviceTier: 'basic' } });
    expect(w.alerted()).toEqual([]);
    // The tenant lookup still says Business, but the organization left it.
    w.plans.set(w.org, 'basic');
    await fail(w, 2);
    expect(w.alerted()).toEqual([]);
    expect(w.rules.rules.get(rule.id)!.lastFiredAt).toBeNull();

    w.plans.set(w.org, 'professional');
    w.alerts.forget(w.org);
    await fail(w, 1);
    expect(w.alerted()).toHaveLength(1);
  });

  it('applies a rule created after the rules were read once told they changed', async () => {
    const w = world();
    await fail(w, 5);
    await w.rule({ condition: { type: 'failed_attestations_per_app', threshold: 1, windowMinutes: 10 } });
    w.alerts.forget(w.org);
    await fail(w, 1);
    expect(w.alerted()).toHaveLength(1);
  });

  it('never fails the attestation: a failed evaluation is dropped and the next event is evaluated', async () => {
    const w = world();
    await w.rule({ condition: { type: 'failed_attestations_per_app', threshold: 1, windowMinutes: 10 } });
    const count = w.devices.failuresOfApp.bind(w.devices);
    let broken = true;
    w.devices.failuresOfApp = (...args) => (broken ? Promise.reject(new Error('database gone')) : count(...args));
    expect(() =>
      w.alerts.onDeviceEvent(w.app, w.devices.record(w.app, { keyId: 'k1', result: 'failure' })),
    ).not.toThrow();
    await fail(w, 1);
    expect(w.alerted()).toEqual([]);
    broken = false;
    await fail(w, 1);
    expect(w.alerted()).toHaveLength(1);
  });
});
