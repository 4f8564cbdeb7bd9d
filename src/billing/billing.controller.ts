import { Controller, Headers, HttpCode, Post, Req } from '@nestjs/common';
import type { RawBodyRequest } from '@nestjs/common';
import type { Request } from 'express';
import { Access, Public } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { BillingPortalService } from './billing-portal.service.js';
import { StripeWebhookService } from './stripe-webhook.service.js';

/** The payment provider's side of billing: its webhook and its customer portal. */
@Controller('api/v1')
export class BillingController {
  constructor(
    private readonly portal: BillingPortalService,
    private readonly webhook: StripeWebhookService,
  ) {}

  @Post('org/billing/portal-session')
  @Access({ session: 'admin' })
  @HttpCode(200)
  portalSession(@OrgAuth() auth: OrgAuthContext) {
    return this.portal.createSession(auth);
  }

  /** Public, authenticated by the Stripe-Signature header over the raw body. */
  @Post('billing/webhook')
  @Public()
  @HttpCode(200)
  async stripeWebhook(@Req() request: RawBodyRequest<Request>, @Headers('stripe-signature') signature?: string) {
    const outcome = await this.webhook.receive(request.rawBody, signature);
    return { received: true, outcome };
  }
}
