import { Injectable } from '@nestjs/common';
import { Brackets, type SelectQueryBuilder } from 'typeorm';
import type { Tenant } from '../apps/tenant-resolver.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { pageWindow, type PageQuery } from '../common/pagination.js';
import { containsPattern } from '../common/search-pattern.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { FeatureRequest, FeatureRequestComment, type FeatureStatus } from './feature-request.entity.js';
import type { FeedbackListQuery, NotificationsQuery, PushNotification, SdkFeatureListQuery } from './feedback.dto.js';

/** A new request's fields. */
export interface NewFeatureRequest {
  title: string;
  description: string;
  submitterId: string;
  deviceHash: string | null;
}

/** A vote as stored. */
export interface VoteRow {
  id: string;
  created_at: Date;
}

/**
 * The owner of `feature_requests`, their comments, votes and `feedback_notifications` (the push
 * channel's records). Console methods take the caller's organization; the SDK's take the tenant
 * the SDK's tenant resolver established, so a request of another app or organization is as
 * unknown as a missing one.
 */
@Injectable()
export class FeedbackRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Stores a new `pending` request of the tenant's app. */
  submit(tenant: Tenant, input: NewFeatureRequest): Promise<FeatureRequest> {
    const repository = this.uow.manager().getRepository(FeatureRequest);
    return repository.save(
      repository.create({
        organizationId: tenant.organizationId,
        appId: tenant.appId,
        title: input.title,
        description: input.description,
        status: 'pending',
        submitterId: input.submitterId,
        deviceHash: input.deviceHash,
        voteCount: 0,
        commentCount: 0,
        voteThresholdNotifiedAt: null,
      }),
    );
  }

  /**
   * One page of the app's requests for the SDK: `pending` ones (waiting for triage) are not
   * public, but `submitterId`'s own are shown to them.
   */
  sdkPage(tenant: Tenant, query: SdkFeatureListQuery): Promise<{ items: FeatureRequest[]; total: number }> {
    const builder = this.requests().where(
      'feature_requests.organization_id = :organizationId AND feature_requests.app_id = :appId',
      { organizationId: tenant.organizationId, appId: tenant.appId },
    );
    if (query.submitter_id) {
      builder.andWhere("(feature_requests.status <> 'pending' OR feature_requests.submitter_id = :submitterId)", {
        submitterId: query.submitter_id,
      });
    } else {
      builder.andWhere("feature_requests.status <> 'pending'");
    }
    if (query.status) builder.andWhere('feature_requests.status = :status', { status: query.status });
    return page(orderFeatures(builder, query.sort ?? 'votes'), query);
  }

  /** One page of the organization's requests by the console's filters. */
  page(organizationId: OrganizationId, query: FeedbackListQuery): Promise<{ items: FeatureRequest[]; total: number }> {
    const builder = this.requests().where('feature_requests.organization_id = :organizationId', { organizationId });
    if (query.status) builder.andWhere('feature_requests.status = :status', { status: query.status });
    if (query.app_id) builder.andWhere('feature_requests.app_id = :appId', { appId: query.app_id });
    if (query.search) {
      builder.andWhere(
        new Brackets((search) =>
          search
            .where(`feature_requests.title ILIKE :pattern ESCAPE '\\'`)
            .orWhere(`feature_requests.description ILIKE :pattern ESCAPE '\\'`),
        ),
        { pattern: containsPattern(query.search) },
      );
    }
    return page(orderFeatures(builder, query.sort ?? 'votes'), query);
  }

  /** The tenant's app's request, or null (never locked: see `FeedbackService.vote`). */
  findInApp(tenant: Tenant, featureId: string): Promise<FeatureRequest | null> {
    return this.uow
      .manager()
      .getRepository(FeatureRequest)
      .findOneBy({ id: featureId, organizationId: tenant.organizationId, appId: tenant.appId });
  }

  /** The organization's request, or null; `lock` holds it FOR UPDATE until the unit of work ends. */
  find(
    organizationId: OrganizationId,
    featureId: string,
    options: { lock?: boolean } = {},
  ): Promise<FeatureRequest | null> {
    return this.uow
      .manager()
      .getRepository(FeatureRequest)
      .findOne({
        where: { id: featureId, organizationId },
        ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
      });
  }

  /** The request's comments, oldest first (`feature` as this repository read it). */
  comments(feature: FeatureRequest): Promise<FeatureRequestComment[]> {
    return this.uow
      .manager()
      .getRepository(FeatureRequestComment)
      .find({
        where: { featureRequestId: feature.id, organizationId: feature.organizationId },
        order: { createdAt: 'ASC', id: 'ASC' },
      });
  }

  /**
   * Adds the vote and counts it; null when the voter or the device already voted (the unique
   * indexes decide, so of two identical votes sent at once one is counted). Answers the new count.
   */
  async addVote(
    feature: FeatureRequest,
    voterId: string,
    deviceHash: string | null,
  ): Promise<{ vote: VoteRow; votes: number } | null> {
    const manager = this.uow.manager();
    const [vote] = await queryRows<VoteRow>(
      manager,
      `INSERT INTO feature_request_votes (organization_id, feature_request_id, voter_id, device_hash)
       VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id, created_at`,
      [feature.organizationId, feature.id, voterId, deviceHash],
    );
    if (!vote) return null;
    const [counted] = await queryRows<{ vote_count: number }>(
      manager,
      `UPDATE feature_requests SET vote_count = vote_count + 1 WHERE id = $1 AND organization_id = $2 RETURNING vote_count`,
      [feature.id, feature.organizationId],
    );
    return { vote, votes: counted.vote_count };
  }

  /**
   * Claims the request's vote-threshold notice: true for the one caller that finds it at
   * `threshold` votes or more and not yet claimed.
   */
  async claimVoteThreshold(feature: FeatureRequest, threshold: number): Promise<boolean> {
    const rows = await queryRows(
      this.uow.manager(),
      `UPDATE feature_requests SET vote_threshold_notified_at = now()
        WHERE id = $1 AND organization_id = $2 AND vote_threshold_notified_at IS NULL AND vote_count >= $3
        RETURNING id`,
      [feature.id, feature.organizationId, threshold],
    );
    return rows.length > 0;
  }

  /** Removes the voter's vote, if any, and uncounts it. */
  async removeVote(feature: FeatureRequest, voterId: string): Promise<void> {
    await this.uow.manager().query(
      `WITH removed AS (
         DELETE FROM feature_request_votes WHERE feature_request_id = $1 AND organization_id = $2 AND voter_id = $3
         RETURNING 1
       )
       UPDATE feature_requests SET vote_count = vote_count - (SELECT count(*) FROM removed)
        WHERE id = $1 AND organization_id = $2 AND EXISTS (SELECT 1 FROM removed)`,
      [feature.id, feature.organizationId, voterId],
    );
  }

  /** Sets the request's status and answers it as stored. */
  async setStatus(organizationId: OrganizationId, featureId: string, status: FeatureStatus): Promise<FeatureRequest> {
    const manager = this.uow.manager();
    await manager.query(
      `UPDATE feature_requests SET status = $3, updated_at = now() WHERE id = $1 AND organization_id = $2`,
      [featureId, organizationId, status],
    );
    return manager.getRepository(FeatureRequest).findOneByOrFail({ id: featureId, organizationId });
  }

  /**
   * A staff comment on `feature` (as this repository read it), counted, with one push-channel
   * record for the submitter and each voter; answers the comment and those subscribers.
   */
  async addStaffComment(
    feature: FeatureRequest,
    authorId: string,
    body: string,
  ): Promise<{ comment: FeatureRequestComment; subscriberIds: string[] }> {
    const manager = this.uow.manager();
    const comment = await manager.save(
      manager.create(FeatureRequestComment, {
        organizationId: feature.organizationId,
        featureRequestId: feature.id,
        authorId,
        authorType: 'admin',
        body,
      }),
    );
    await manager.query(
      `UPDATE feature_requests SET comment_count = comment_count + 1, updated_at = now()
        WHERE id = $1 AND organization_id = $2`,
      [feature.id, feature.organizationId],
    );
    const subscribers = await manager.query<{ subscriber_id: string }[]>(
      `INSERT INTO feedback_notifications (organization_id, app_id, feature_request_id, comment_id, subscriber_id, type)
       SELECT $1, $2::uuid, $3, $4, subscriber_id, 'staff_comment'
         FROM (SELECT submitter_id AS subscriber_id FROM feature_requests WHERE id = $3 AND organization_id = $1
                UNION
               SELECT voter_id FROM feature_request_votes WHERE feature_request_id = $3 AND organization_id = $1) subscribers
       RETURNING subscriber_id`,
      [feature.organizationId, feature.appId, feature.id, comment.id],
    );
    return { comment, subscriberIds: subscribers.map((row) => row.subscriber_id) };
  }

  /** One page of the subscriber's push-channel records in the tenant's app, newest first. */
  async notifications(
    tenant: Tenant,
    query: NotificationsQuery,
  ): Promise<{ items: PushNotification[]; total: number }> {
    const manager = this.uow.manager();
    const parameters = [tenant.organizationId, tenant.appId, query.subscriber_id];
    const where = `n.organization_id = $1 AND n.app_id = $2 AND n.subscriber_id = $3`;
    const { limit, offset } = pageWindow(query);
    const [rows, [count]] = await Promise.all([
      manager.query<
        { id: string; feature_request_id: string; title: string; comment_id: string; body: string; created_at: Date }[]
      >(
        `SELECT n.id, n.feature_request_id, f.title, n.comment_id, c.body, n.created_at
           FROM feedback_notifications n
           JOIN feature_requests f ON f.id = n.feature_request_id
           JOIN feature_request_comments c ON c.id = n.comment_id
          WHERE ${where}
          ORDER BY n.created_at DESC, n.id DESC
          LIMIT $4 OFFSET $5`,
        [...parameters, limit, offset],
      ),
      manager.query<{ total: number }[]>(
        `SELECT count(*)::int AS total FROM feedback_notifications n WHERE ${where}`,
        parameters,
      ),
    ]);
    return {
      items: rows.map((row) => ({
        id: row.id,
        featureRequestId: row.feature_request_id,
        featureTitle: row.title,
        commentId: row.comment_id,
        body: row.body,
        createdAt: row.created_at,
      })),
      total: count.total,
    };
  }

  private requests(): SelectQueryBuilder<FeatureRequest> {
    return this.uow.manager().getRepository(FeatureRequest).createQueryBuilder('feature_requests');
  }
}

async function page(
  builder: SelectQueryBuilder<FeatureRequest>,
  query: PageQuery,
): Promise<{ items: FeatureRequest[]; total: number }> {
  const { limit, offset } = pageWindow(query);
  const [items, total] = await builder.skip(offset).take(limit).getManyAndCount();
  return { items, total };
}

function orderFeatures(
  builder: SelectQueryBuilder<FeatureRequest>,
  sort: 'votes' | 'newest' | 'oldest',
): SelectQueryBuilder<FeatureRequest> {
  switch (sort) {
    case 'votes':
      return builder
        .orderBy('feature_requests.vote_count', 'DESC')
        .addOrderBy('feature_requests.created_at', 'DESC')
        .addOrderBy('feature_requests.id', 'DESC');
    case 'newest':
      return builder.orderBy('feature_requests.created_at', 'DESC').addOrderBy('feature_requests.id', 'DESC');
    case 'oldest':
      return builder.orderBy('feature_requests.created_at', 'ASC').addOrderBy('feature_requests.id', 'ASC');
  }
}
