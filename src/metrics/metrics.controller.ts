import { Controller, Get, Headers, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '../common/access/access.decorator.js';
import { safeEqual } from '../common/crypto.js';
import { forbidden, unauthorized } from '../common/errors/app-exception.js';
import { Metrics } from './metrics.js';

/**
 * The Prometheus scrape endpoint. With `METRICS_TOKEN` set it asks for `Authorization: Bearer
 * <token>` (docs/operations.md). Without it the route is open for a developer's machine and tests,
 * but closed in production (`NODE_ENV=production`, as the image sets it): nothing else would keep it
 * internal, since it shares the API's port.
 */
@Controller('metrics')
@Public()
export class MetricsController {
  /** Read here rather than in AppConfig, which this module does not own; fixed at start like the rest. */
  private readonly token = process.env.METRICS_TOKEN?.trim() || null;
  private readonly closed = !this.token && process.env.NODE_ENV === 'production';

  constructor(private readonly metrics: Metrics) {}

  @Get()
  async scrape(
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ) {
    if (this.closed) {
      throw forbidden('Metrics need METRICS_TOKEN in production', {
        hint: 'Set METRICS_TOKEN and have the scraper send Authorization: Bearer <METRICS_TOKEN>',
      });
    }
    if (this.token && !safeEqual(authorization ?? '', `Bearer ${this.token}`)) {
      throw unauthorized('A metrics token is required', {
        hint: 'Send Authorization: Bearer <METRICS_TOKEN>',
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      });
    }
    response.setHeader('Content-Type', this.metrics.contentType);
    response.setHeader('Cache-Control', 'no-store');
    return this.metrics.render();
  }
}
