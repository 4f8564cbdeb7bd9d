import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { TenantResolver } from '../apps/tenant-resolver.js';
import { FlagsService } from '../flags/flags.service.js';
import { HealthRepository } from './health.repository.js';
import { SigningKeysService } from '../device-tokens/signing-keys.service.js';

export type ComponentStatus = 'healthy' | 'unhealthy';

export interface ComponentReport {
  status: ComponentStatus;
  latencyMs?: number;
  error?: string;
}

export interface TenantReport {
  found: boolean;
  appRegistered: boolean;
  attestationEnabled: boolean | null;
  hint?: string;
}

/**
 * How long readiness waits for one probe: a database connection that never answers, a flag store
 * or a signing key that hangs makes its component unhealthy after this long, so the answer (503)
 * comes before the Kubernetes probe's own 3 s timeout (deploy/kubernetes/deployment.yaml).
 * Redis has its own 500 ms limit in the client (redis-probe.ts).
 */
export const PROBE_TIMEOUT_MS = 2_000;

@Injectable()
export class HealthService {
  constructor(
    private readonly probe: HealthRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly signing: SigningKeysService,
    private readonly tenants: TenantResolver,
    private readonly flags: FlagsService,
  ) {}

  async database(): Promise<ComponentReport> {
    const started = performance.now();
    try {
      await withinTime(this.probe.ping());
      return { status: 'healthy', latencyMs: elapsed(started) };
    } catch (error) {
      return { status: 'unhealthy', latencyMs: -1, error: timedOut(error, 'database') ?? 'database unreachable' };
    }
  }

  attestationRoot(): ComponentReport {
    try {
      const certificate = new X509Certificate(readFileSync(this.config.appAttestRootCaPath));
      if (!certificate.ca) return { status: 'unhealthy', error: 'root certificate is not a CA' };
      return { status: 'healthy' };
    } catch {
      return { status: 'unhealthy', error: 'root certificate does not decode' };
    }
  }

  async featureFlags(): Promise<ComponentReport> {
    const started = performance.now();
    try {
      await withinTime(this.flags.probe());
      return { status: 'healthy', latencyMs: elapsed(started) };
    } catch (error) {
      return { status: 'unhealthy', error: timedOut(error, 'flag store') ?? 'flag store not queryable' };
    }
  }

  async jwtSigning(): Promise<ComponentReport> {
    const started = performance.now();
    try {
      await withinTime(this.signing.selfCheck());
      return { status: 'healthy', latencyMs: elapsed(started) };
    } catch (error) {
      return { status: 'unhealthy', error: timedOut(error, 'token signing') ?? 'sign and verify cycle failed' };
    }
  }

  /** Whether an SDK's identity headers match a registered app; exposes nothing else. */
  async tenant(bundleId: string, teamId: string): Promise<TenantReport> {
    const tenant = await this.tenants.lookup(bundleId, teamId);
    if (!tenant) {
      return {
        found: false,
        appRegistered: false,
        attestationEnabled: null,
        hint: 'No app is registered with this Bundle ID and Team ID. Register it in the dashboard under Apps; both values must match exactly.',
      };
    }
    return { found: true, appRegistered: true, attestationEnabled: tenant.appActive && tenant.organizationActive };
  }
}

class ProbeTimeout extends Error {}

/** `work`, or a ProbeTimeout once PROBE_TIMEOUT_MS have passed (the work itself is left to end on its own). */
async function withinTime<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout()), PROBE_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function timedOut(error: unknown, component: string): string | null {
  return error instanceof ProbeTimeout ? `${component} did not answer within ${PROBE_TIMEOUT_MS / 1000} s` : null;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
