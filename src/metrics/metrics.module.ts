import { Module } from '@nestjs/common';
import { DatabasePool } from '../database/database-pool.js';
import { HttpMetrics } from './http-metrics.js';
import { MetricsController } from './metrics.controller.js';
import { Metrics } from './metrics.js';

/**
 * `GET /metrics`, the `Metrics` recorder features import, and the HTTP metrics, which the
 * application puts in its per-request pipeline (src/app.ts) so every answer is counted and timed.
 */
@Module({
  controllers: [MetricsController],
  providers: [Metrics, HttpMetrics, DatabasePool],
  exports: [Metrics, HttpMetrics],
})
export class MetricsModule {}
