import { Controller, Get, Headers, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '../common/access/access.decorator.js';
import { safeEqual } from '../common/crypto.js';
import { unauthorized } from '../common/errors/app-exception.js';
import { Metrics } from './metrics.js';

/**
 * The Prometheus scrape endpoint. Public by design for a cluster-internal scraper; with
 * `METRICS_TOKEN` set it asks for `Authorization: Bearer <token>` (docs/operations.md).
 */
@Controller('metrics')
@Public()
export class MetricsController {
  /** Read here rather than in AppConfig, which this module does not own; fixed at start like the rest. */
  private readonly token = process.env.METRICS_TOKEN?.trim() || null;

  constructor(private readonly metrics: Metrics) {}

  @Get()
  async scrape(
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ) {
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
