import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { HttpMetricsMiddleware } from './http-metrics.middleware.js';
import { MetricsController } from './metrics.controller.js';
import { Metrics } from './metrics.js';

/** `GET /metrics`, the HTTP metrics middleware and the `Metrics` recorder features import. */
@Module({
  controllers: [MetricsController],
  providers: [Metrics, HttpMetricsMiddleware],
  exports: [Metrics],
})
export class MetricsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(HttpMetricsMiddleware).forRoutes('*');
  }
}
