import { Module } from '@nestjs/common';
import { HttpMetricsMiddleware } from './http-metrics.middleware.js';
import { MetricsController } from './metrics.controller.js';
import { Metrics } from './metrics.js';

/**
 * `GET /metrics`, the `Metrics` recorder features import, and the HTTP metrics middleware, which
 * the application puts in its per-request pipeline (src/app.ts) so it times every answer.
 */
@Module({
  controllers: [MetricsController],
  providers: [Metrics, HttpMetricsMiddleware],
  exports: [Metrics, HttpMetricsMiddleware],
})
export class MetricsModule {}
