import { DebugTokenDenySetSources } from '../../src/attestation/debug-token-deny-set-sources.js';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import { DenySet } from '../../src/devices/deny-set.js';
import { DenySetSourcesService } from '../../src/devices/deny-set-sources.service.js';
import type { DevicesRepository, StoredDeviceFacts } from '../../src/devices/devices.repository.js';
import type { TokenRevocationsRepository } from '../../src/devices/token-revocations.repository.js';
import type { DeviceEventNotice } from '../../src/risk-alerts/risk-alert-rule.js';
import { fakeDiscovery } from '../harness/fake-discovery.js';
import { testConfig } from './config.js';
import type { FakeDebugTokens } from './debug-tokens.js';

interface EventRow {
  organizationId: string;
  appId: string;
  keyId: string;
  result: 'success' | 'failure';
  at: number;
}

interface DeviceRow extends StoredDeviceFacts {
  organizationId: string;
  appId: string;
  keyId: string;
  firstSeenAt: number;
}

const MINUTE = 60_000;

/**
 * `device_events` and `devices` in memory, as the risk alert evaluation counts them: failures of a
 * key or an app, and devices first seen, within a window ending now. A device is first seen at its
 * first successful attestation in the app.
 */
export class FakeDeviceEvents implements Pick<
  DevicesRepository,
  'failuresOfKey' | 'failuresOfApp' | 'newDevices' | 'storedFacts'
> {
  readonly events: EventRow[] = [];
  readonly devices: DeviceRow[] = [];

  /**
   * An attestation of `keyId` in the app, `minutesAgo` minutes ago, recorded as the attestation
   * service does; returns the notice it hands the evaluation.
   */
  record(
    app: { organizationId: string; appId: string },
    event: {
      keyId: string;
      result: 'success' | 'failure';
      riskScore?: number;
      jailbreak?: boolean;
      errorCode?: string;
    },
    minutesAgo = 0,
  ): DeviceEventNotice {
    const at = Date.now() - minutesAgo * MINUTE;
    this.events.push({ ...app, keyId: event.keyId, result: event.result, at });
    let isNewDevice = false;
    if (event.result === 'success') {
      let device = this.device(app.appId, event.keyId);
      if (!device) {
        isNewDevice = true;
        device = {
          ...app,
          keyId: event.keyId,
          firstSeenAt: at,
          client_device_id: `client-${event.keyId}`,
          risk_score: 0,
          jailbreak_detected: false,
          device_model: 'iPhone16,1',
          os_version: '18.2',
        };
        this.devices.push(device);
      }
      Object.assign(device, { risk_score: event.riskScore ?? 0, jailbreak_detected: event.jailbreak ?? false });
    }
    return {
      keyId: event.keyId,
      result: event.result,
      riskScore: event.result === 'success' ? (event.riskScore ?? 0) : null,
      isNewDevice,
      errorCode: event.result === 'failure' ? (event.errorCode ?? 'rp_id_mismatch') : null,
    };
  }

  storedFacts(organizationId: OrganizationId, appId: string, keyId: string): Promise<StoredDeviceFacts | null> {
    const device = this.device(appId, keyId);
    if (!device || device.organizationId !== organizationId) return Promise.resolve(null);
    const { client_device_id, risk_score, jailbreak_detected, device_model, os_version } = device;
    return Promise.resolve({ client_device_id, risk_score, jailbreak_detected, device_model, os_version });
  }

  failuresOfKey(organizationId: OrganizationId, appId: string, keyId: string, windowMinutes: number): Promise<number> {
    return Promise.resolve(
      this.within(organizationId, windowMinutes).filter(
        (event) => event.appId === appId && event.keyId === keyId && event.result === 'failure',
      ).length,
    );
  }

  failuresOfApp(organizationId: OrganizationId, appId: string, windowMinutes: number): Promise<number> {
    return Promise.resolve(
      this.within(organizationId, windowMinutes).filter((event) => event.appId === appId && event.result === 'failure')
        .length,
    );
  }

  newDevices(organizationId: OrganizationId, appId: string | null, windowMinutes: number): Promise<number> {
    const since = Date.now() - windowMinutes * MINUTE;
    const attested = new Set(
      this.within(organizationId, windowMinutes)
        .filter((event) => event.result === 'success' && (appId === null || event.appId === appId))
        .map((event) => `${event.appId}\n${event.keyId}`),
    );
    return Promise.resolve(
      this.devices.filter(
        (device) =>
          device.organizationId === organizationId &&
          device.firstSeenAt > since &&
          attested.has(`${device.appId}\n${device.keyId}`),
      ).length,
    );
  }

  private within(organizationId: string, windowMinutes: number): EventRow[] {
    const since = Date.now() - windowMinutes * MINUTE;
    return this.events.filter((event) => event.organizationId === organizationId && event.at > since);
  }

  private device(appId: string, keyId: string): DeviceRow | undefined {
    return this.devices.find((device) => device.appId === appId && device.keyId === keyId);
  }

  asDevicesRepository(): DevicesRepository {
    return this as unknown as DevicesRepository;
  }
}

/** `devices.is_blocked` in memory: which keys are blocked in which app. */
export class FakeBlockedDevices implements Pick<DevicesRepository, 'isBlocked'> {
  private readonly blocked = new Set<string>();

  block(appId: string, keyId: string): void {
    this.blocked.add(`${appId}\n${keyId}`);
  }

  unblock(appId: string, keyId: string): void {
    this.blocked.delete(`${appId}\n${keyId}`);
  }

  isBlocked(appId: string, keyId: string): Promise<boolean> {
    return Promise.resolve(this.blocked.has(`${appId}\n${keyId}`));
  }

  asDevicesRepository(): DevicesRepository {
    return this as unknown as DevicesRepository;
  }
}

/**
 * The real deny set over fakes, for its exact read (`refusalNow`, backend verification): blocked
 * devices from `devices`, revoked debug tokens through attestation's own source over
 * `debugTokens`. It hears no revocation channel (nothing in a unit test announces one).
 */
export function denySetOver(devices: FakeBlockedDevices, debugTokens: FakeDebugTokens): DenySet {
  const sources = new DenySetSourcesService(
    fakeDiscovery(() => [new DebugTokenDenySetSources(debugTokens.asRepository())]),
  );
  sources.onModuleInit();
  const silent = {
    listener: () => ({ start: () => Promise.resolve(), close: () => Promise.resolve() }),
  } as unknown as TokenRevocationsRepository;
  return new DenySet(
    devices.asDevicesRepository(),
    silent,
    sources,
    testConfig,
    fakeDiscovery(() => []),
  );
}
