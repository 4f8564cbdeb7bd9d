import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { TokenSigningProbe } from './token-signing-probe.js';

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

@Injectable()
export class HealthService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly signing: TokenSigningProbe,
  ) {}

  async database(): Promise<ComponentReport> {
    const started = performance.now();
    try {
      await this.dataSource.query('SELECT 1');
      return { status: 'healthy', latencyMs: elapsed(started) };
    } catch {
      return { status: 'unhealthy', latencyMs: -1, error: 'database unreachable' };
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
      await this.dataSource.query('SELECT 1 FROM feature_flags LIMIT 1');
      return { status: 'healthy', latencyMs: elapsed(started) };
    } catch {
      return { status: 'unhealthy', error: 'flag store not queryable' };
    }
  }

  async jwtSigning(): Promise<ComponentReport> {
    const started = performance.now();
    try {
      await this.signing.signAndVerify();
      return { status: 'healthy', latencyMs: elapsed(started) };
    } catch {
      return { status: 'unhealthy', error: 'sign and verify cycle failed' };
    }
  }

  /** Whether an SDK's identity headers match a registered app; exposes nothing else. */
  async tenant(bundleId: string, teamId: string): Promise<TenantReport> {
    const rows: { app_active: boolean; org_active: boolean }[] = await this.dataSource.query(
      `SELECT apps.is_active AS app_active, organizations.is_active AS org_active
         FROM apps JOIN organizations ON organizations.id = apps.organization_id
        WHERE apps.bundle_id = $1 AND apps.team_id = $2`,
      [bundleId, teamId],
    );
    const row = rows[0];
    if (!row) {
      return {
        found: false,
        appRegistered: false,
        attestationEnabled: null,
        hint: 'No app is registered with this Bundle ID and Team ID. Register it in the dashboard under Apps; both values must match exactly.',
      };
    }
    return { found: true, appRegistered: true, attestationEnabled: row.app_active && row.org_active };
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
