import { Controller, Get, Headers, HttpCode, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Public } from '../common/access/access.decorator.js';
import { HealthService, type ComponentReport } from './health.service.js';
import { RedisProbe } from './redis-probe.js';

export const API_VERSION = 'v1';

/** Kubernetes probes: `/health` for liveness, `/api/v1/health/status` for readiness. */
@Controller()
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthService,
    private readonly redis: RedisProbe,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Liveness: answers without touching the database. */
  @Get('health')
  live() {
    return { status: 'healthy', timestamp: new Date().toISOString(), commit: this.config.serviceCommit };
  }

  @Get('api/v1/health')
  async summary(@Headers('x-bundle-id') bundleId?: string, @Headers('x-team-id') teamId?: string) {
    const db = await this.health.database();
    const degraded = db.status !== 'healthy';
    const body: Record<string, unknown> = {
      status: degraded ? 'degraded' : 'ok',
      version: API_VERSION,
      services: {
        api: { status: 'ok', latencyMs: 0 },
        db: degraded ? { status: 'degraded', latencyMs: -1 } : { status: 'ok', latencyMs: db.latencyMs },
      },
      timestamp: new Date().toISOString(),
      commit: this.config.serviceCommit,
    };
    if (bundleId && teamId && !degraded) body.tenant = await this.health.tenant(bundleId, teamId);
    return body;
  }

  /** Readiness: 503 as soon as one component is unhealthy; Redis is a component when REDIS_URL is set. */
  @Get('api/v1/health/status')
  @HttpCode(200)
  async status(@Res({ passthrough: true }) response: Response) {
    const [database, featureFlags, jwtSigning, redis] = await Promise.all([
      this.health.database(),
      this.health.featureFlags(),
      this.health.jwtSigning(),
      this.redis.configured ? this.redis.check() : undefined,
    ]);
    const components: Record<string, ComponentReport> = {
      database,
      attestation: this.health.attestationRoot(),
      featureFlags,
      jwtSigning,
      ...(redis ? { redis } : {}),
    };
    const healthy = Object.values(components).every((component) => component.status === 'healthy');
    response.status(healthy ? 200 : 503);
    return {
      status: healthy ? 'healthy' : 'degraded',
      timestamp: new Date().toISOString(),
      components,
      version: this.config.serviceCommit,
    };
  }
}
