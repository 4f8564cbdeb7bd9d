import { jwtConfigurationOf, riskThresholdsOf } from '../../src/apps/app.entity.js';
import type { Tenant, TenantResolver } from '../../src/apps/tenant-resolver.js';
import { trustAppId, trustOrganizationId } from '../../src/common/access/tenant-id.js';
import type { AppConfig } from '../../src/config/app-config.js';
import type { FlagsService } from '../../src/flags/flags.service.js';
import { HealthController } from '../../src/health/health.controller.js';
import type { HealthRepository } from '../../src/health/health.repository.js';
import { HealthService, type ComponentReport } from '../../src/health/health.service.js';
import type { RedisProbe } from '../../src/health/redis-probe.js';
import type { SigningKeysService } from '../../src/device-tokens/signing-keys.service.js';
import { testConfig } from './config.js';

/** How a component answers its probe: it answers, it fails, or it never answers. */
export type ProbeOutcome = 'answers' | 'fails' | 'hangs';

/**
 * One component's probe. A failure carries what a careless report would leak: the connection
 * string with its password, as drivers put it in their messages.
 */
class FakeProbe {
  outcome: ProbeOutcome = 'answers';
  calls = 0;

  constructor(private readonly failure: string) {}

  run(): Promise<void> {
    this.calls++;
    if (this.outcome === 'fails') return Promise.reject(new Error(this.failure));
    if (this.outcome === 'hangs') return new Promise<void>(() => undefined);
    return Promise.resolve();
  }
}

/** The database as the health check pings it. */
export class FakeDatabasePing extends FakeProbe implements Pick<HealthRepository, 'ping'> {
  static readonly FAILURE = 'connect ECONNREFUSED postgres://attestly:db-pass-7@db.internal:5432/attestly';

  constructor() {
    super(FakeDatabasePing.FAILURE);
  }

  ping(): Promise<void> {
    return this.run();
  }
}

/** The token signing cycle with the real key (SigningKeysService.selfCheck). */
export class FakeTokenSigning extends FakeProbe implements Pick<SigningKeysService, 'selfCheck'> {
  static readonly FAILURE = 'error:1E08010C:DECODER routines::unsupported (key -----BEGIN PRIVATE KEY-----MIIE)';

  constructor() {
    super(FakeTokenSigning.FAILURE);
  }

  selfCheck(): Promise<void> {
    return this.run();
  }
}

/** The flag store's read probe. */
export class FakeFlagStoreProbe extends FakeProbe implements Pick<FlagsService, 'probe'> {
  static readonly FAILURE = 'relation "feature_flags" does not exist (postgres://attestly:db-pass-7@db.internal)';

  constructor() {
    super(FakeFlagStoreProbe.FAILURE);
  }

  probe(): Promise<void> {
    return this.run();
  }
}

/** Redis as readiness sees it: not configured (no `REDIS_URL`) unless `configure` is called. */
export class FakeRedisReadiness implements Pick<RedisProbe, 'configured' | 'check'> {
  configured = false;
  report: ComponentReport = { status: 'healthy', latencyMs: 0.4 };
  checks = 0;

  configure(report: ComponentReport): this {
    this.configured = true;
    this.report = report;
    return this;
  }

  check(): Promise<ComponentReport> {
    this.checks++;
    return Promise.resolve(this.report);
  }
}

/** The apps the SDK's identity headers may name, looked up past any cache. */
export class FakeTenantLookup implements Pick<TenantResolver, 'lookup'> {
  private readonly tenants = new Map<string, Tenant>();

  /** An iOS app registered under `bundleId` and `teamId`, active in an active organization unless told. */
  add(bundleId: string, teamId: string, state: { appActive?: boolean; organizationActive?: boolean } = {}): Tenant {
    const tenant: Tenant = {
      appId: trustAppId(`app-${this.tenants.size + 1}`),
      appName: 'Acme',
      bundleId,
      teamId,
      organizationId: trustOrganizationId('org-acme'),
      serviceTier: 'professional',
      currentPeriodEnd: null,
      billingAnchorDay: null,
      appActive: state.appActive ?? true,
      organizationActive: state.organizationActive ?? true,
      jwtConfiguration: jwtConfigurationOf({ jwtConfiguration: {} }),
      riskThresholds: riskThresholdsOf({ riskThresholds: {} }),
      requireSignedSubject: true,
      subjectSigningSecret: 'subject-signing-secret-9',
    };
    this.tenants.set(`${bundleId}\n${teamId}`, tenant);
    return tenant;
  }

  lookup(bundleId: string, teamId: string): Promise<Tenant | null> {
    return Promise.resolve(this.tenants.get(`${bundleId}\n${teamId}`) ?? null);
  }
}

/** The health routes over fakes of every component they probe; each fake answers until told otherwise. */
export function fakeHealth(config: AppConfig = testConfig) {
  const database = new FakeDatabasePing();
  const signing = new FakeTokenSigning();
  const flags = new FakeFlagStoreProbe();
  const redis = new FakeRedisReadiness();
  const tenants = new FakeTenantLookup();
  const service = new HealthService(
    database as unknown as HealthRepository,
    config,
    signing as unknown as SigningKeysService,
    tenants as unknown as TenantResolver,
    flags as unknown as FlagsService,
  );
  const controller = new HealthController(service, redis as unknown as RedisProbe, config);
  return { controller, service, database, signing, flags, redis, tenants };
}
