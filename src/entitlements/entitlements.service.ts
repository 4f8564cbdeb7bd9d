import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { sha256Hex } from '../common/crypto.js';
import { conflict } from '../common/errors/app-exception.js';
import { canonicalJson } from '../common/rules/canonical-json.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { WebhookEvents } from '../webhooks/webhook-events.js';
import {
  subscriptionEventsFor,
  toSubscriptionWebhookData,
  type EntitlementState,
  type EntitlementStatus,
} from './entitlement-state.js';
import type { EntitlementEventDto } from './entitlements.dto.js';
import { EntitlementsRepository } from './entitlements.repository.js';

export interface IngestResult {
  eventId: string;
  /** The event was ingested before: nothing changed and nothing fired. */
  duplicate: boolean;
  entitlement: EntitlementState & { updatedAt: Date };
}

/**
 * Ingests normalized subscription events (DESIGN.md section 4): each `event_id` once per
 * organization, the subject's current entitlement replaced by the event's state, and the
 * subscription webhooks of a real change written in the same unit of work.
 */
@Injectable()
export class EntitlementsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly entitlements: EntitlementsRepository,
    private readonly webhooks: WebhookEvents,
  ) {}

  async ingest(auth: OrgAuthContext, input: EntitlementEventDto): Promise<IngestResult> {
    const state = stateOf(input);
    const fingerprint = sha256Hex(canonicalJson({ ...state, expiresAt: state.expiresAt?.toISOString() ?? null }));
    const organizationId = auth.organizationId;
    return this.uow.run(async () => {
      const recorded = await this.entitlements.recordEvent(organizationId, {
        eventId: input.event_id,
        subjectId: state.subjectId,
        payload: input,
        fingerprint,
      });
      if (!recorded) return this.duplicate(auth, input.event_id, fingerprint);

      // One subject's events apply one at a time, so each sees the state the previous one left.
      await this.entitlements.lockSubject(organizationId, state.subjectId);
      const previous = await this.entitlements.find(organizationId, state.subjectId);
      const saved = await this.entitlements.save(organizationId, state, input.event_id);
      await this.webhooks.announceSubscriptionChange(
        organizationId,
        subscriptionEventsFor(previous, state),
        toSubscriptionWebhookData(state, input.event_id),
      );
      return { eventId: input.event_id, duplicate: false, entitlement: saved };
    });
  }

  /** The same event again answers as before; the same id with other content is refused. */
  private async duplicate(auth: OrgAuthContext, eventId: string, fingerprint: string): Promise<IngestResult> {
    const earlier = await this.entitlements.event(auth.organizationId, eventId);
    if (!earlier || earlier.fingerprint !== fingerprint) {
      throw conflict(`event_id ${eventId} was already ingested with different content`, {
        hint: 'Each distinct event needs its own event_id',
      });
    }
    const entitlement = await this.entitlements.find(auth.organizationId, earlier.subjectId);
    if (!entitlement) throw new Error(`entitlement event ${eventId} was recorded without its entitlement`);
    return { eventId, duplicate: true, entitlement };
  }
}

function stateOf(input: EntitlementEventDto): EntitlementState {
  return {
    subjectId: input.subject_id,
    tier: input.tier ?? '',
    status: input.status as EntitlementStatus,
    interval: input.interval ?? '',
    source: input.source ?? '',
    productId: input.product_id ?? '',
    expiresAt: input.expires_at ? new Date(input.expires_at) : null,
    sourceSubscriptionId: input.source_subscription_id ?? '',
    environment: input.environment ?? 'production',
    autoRenew: input.auto_renew ?? false,
  };
}

/** The ingestion response, snake_case like the events. */
export interface EntitlementIngestResponse {
  event_id: string;
  /** The event id was seen before: nothing changed. */
  duplicate: boolean;
  entitlement: {
    subject_id: string;
    tier: string;
    status: IngestResult['entitlement']['status'];
    interval: string;
    source: string;
    product_id: string;
    expires_at: string | null;
    source_subscription_id: string;
    environment: string;
    auto_renew: boolean;
    updated_at: Date;
  };
}

export function toIngestResponse(result: IngestResult): EntitlementIngestResponse {
  const { entitlement } = result;
  return {
    event_id: result.eventId,
    duplicate: result.duplicate,
    entitlement: {
      subject_id: entitlement.subjectId,
      tier: entitlement.tier,
      status: entitlement.status,
      interval: entitlement.interval,
      source: entitlement.source,
      product_id: entitlement.productId,
      expires_at: entitlement.expiresAt?.toISOString() ?? null,
      source_subscription_id: entitlement.sourceSubscriptionId,
      environment: entitlement.environment,
      auto_renew: entitlement.autoRenew,
      updated_at: entitlement.updatedAt,
    },
  };
}
