import { Global, Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { HttpMetricsMiddleware } from './http-metrics.middleware.js';
import { MetricsController } from './metrics.controller.js';
import { Metrics } from './metrics.js';

/** `GET /metrics` and the `Metrics` recorder, injectable everywhere (global). */
@Global()
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
