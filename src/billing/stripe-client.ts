import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import Stripe from 'stripe';
import { serviceUnavailable } from '../common/errors/app-exception.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

const TIMEOUT_MS = 10_000;

/**
 * The Stripe API calls the service makes, through Stripe's own SDK (`stripe`): its retries with
 * idempotency keys, its error classes and its API version pinning. `STRIPE_API_URL` points it at
 * another server (the tests' fake Stripe on 127.0.0.1). Usable when STRIPE_SECRET_KEY is set.
 */
@Injectable()
export class StripeClient {
  private readonly logger: Logger;
  private readonly stripe: Stripe | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.logger = createLogger(config).child({ component: 'stripe' });
    const api = new URL(config.stripeApiUrl);
    this.stripe = config.stripeSecretKey
      ? new Stripe(config.stripeSecretKey, {
          host: api.hostname,
          port: api.port || (api.protocol === 'https:' ? 443 : 80),
          protocol: api.protocol === 'https:' ? 'https' : 'http',
          timeout: TIMEOUT_MS,
          maxNetworkRetries: 1,
          telemetry: false,
        })
      : null;
  }

  get configured(): boolean {
    return this.stripe !== null;
  }

  /** A short-lived, pre-authenticated billing portal URL for the customer. */
  async createPortalSession(customerId: string, returnUrl: string): Promise<string> {
    const session = await this.call('billing_portal.sessions.create', (stripe) =>
      stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }),
    );
    if (typeof session.url !== 'string') throw unreachable();
    return session.url;
  }

  /** Cancels at once; a subscription Stripe no longer knows counts as cancelled. */
  async cancelSubscription(subscriptionId: string): Promise<void> {
    try {
      await this.call('subscriptions.cancel', (stripe) => stripe.subscriptions.cancel(subscriptionId), [404]);
    } catch (error) {
      if (error instanceof KnownAbsence) return;
      throw error;
    }
  }

  private async call<T>(
    operation: string,
    request: (stripe: Stripe) => Promise<T>,
    absentStatuses: number[] = [],
  ): Promise<T> {
    const stripe = this.stripe;
    if (!stripe) throw serviceUnavailable('Billing is not configured on this server');
    try {
      return await request(stripe);
    } catch (error) {
      const status = error instanceof Stripe.errors.StripeError ? error.statusCode : undefined;
      if (status !== undefined && absentStatuses.includes(status)) throw new KnownAbsence();
      // The SDK's errors carry Stripe's message and request id, never the secret key.
      this.logger.error(
        { operation, status, type: (error as { type?: unknown }).type, message: (error as Error).message },
        'Stripe request failed',
      );
      throw unreachable();
    }
  }
}

/** Stripe answered that the object does not exist (already gone). */
class KnownAbsence extends Error {}

function unreachable() {
  return serviceUnavailable('The billing provider could not complete the request', { hint: 'Try again in a moment' });
}
