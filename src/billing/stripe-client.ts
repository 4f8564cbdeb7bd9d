import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { serviceUnavailable } from '../common/errors/app-exception.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

const STRIPE_API = 'https://api.stripe.com/v1';
const TIMEOUT_MS = 10_000;

/**
 * The few Stripe API calls the service makes, over plain HTTPS (form-encoded, as Stripe's API
 * takes them). Only usable when STRIPE_SECRET_KEY is set.
 */
@Injectable()
export class StripeClient {
  private readonly logger: Logger;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.logger = createLogger(config).child({ component: 'stripe' });
  }

  get configured(): boolean {
    return this.config.stripeSecretKey !== null;
  }

  /** A short-lived, pre-authenticated billing portal URL for the customer. */
  async createPortalSession(customerId: string, returnUrl: string): Promise<string> {
    const body = await this.call('POST', '/billing_portal/sessions', { customer: customerId, return_url: returnUrl });
    if (typeof body.url !== 'string') throw unreachable();
    return body.url;
  }

  /** Cancels at once; a subscription Stripe no longer knows counts as cancelled. */
  async cancelSubscription(subscriptionId: string): Promise<void> {
    await this.call('DELETE', `/subscriptions/${encodeURIComponent(subscriptionId)}`, undefined, [404]);
  }

  private async call(
    method: 'POST' | 'DELETE',
    path: string,
    form?: Record<string, string>,
    acceptedFailures: number[] = [],
  ): Promise<Record<string, unknown>> {
    const key = this.config.stripeSecretKey;
    if (!key) throw serviceUnavailable('Billing is not configured on this server');
    let response: Response;
    try {
      response = await fetch(`${STRIPE_API}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${key}`,
          ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: form ? new URLSearchParams(form).toString() : undefined,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      this.logger.error({ err: error, path }, 'Stripe request failed');
      throw unreachable();
    }
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok && !acceptedFailures.includes(response.status)) {
      this.logger.error({ status: response.status, path, error: body.error }, 'Stripe answered with an error');
      throw unreachable();
    }
    return body;
  }
}

function unreachable() {
  return serviceUnavailable('The billing provider could not complete the request', { hint: 'Try again in a moment' });
}
