import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { Tenant } from '../apps/tenant-resolver.js';
import { AuditService } from '../audit/audit.service.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { queryRows } from '../database/sql.js';
import { NotificationPreferencesService } from '../organizations/notification-preferences.service.js';
import { containsPattern } from '../common/search-pattern.js';
import { feedbackMail } from './feedback-mail.js';
import type {
  FeedbackListQuery,
  NotificationsQuery,
  PushNotification,
  SdkFeatureListQuery,
  SubmitFeatureRequestDto,
  VoteDto,
} from './feedback.dto.js';
import { duplicateVote, featureRequestNotFound } from './feedback.exceptions.js';
import {
  FeatureRequest,
  FeatureRequestComment,
  type FeatureRequestVote,
  type FeatureStatus,
} from './feature-request.entity.js';
import { StaffNotices } from './staff-notices.js';
import { oneLine } from '../common/one-line.js';
import { PushOutbox } from '../push/push-outbox.js';
import { pageWindow, type PageQuery } from '../common/pagination.js';

export interface FeatureWithComments {
  feature: FeatureRequest;
  comments: FeatureRequestComment[];
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** Who wrote a staff comment: the signed-in user, or the user behind the key (else the key). */
export function staffAuthorId(auth: OrgAuthContext): string {
  const { caller } = auth;
  return caller.kind === 'session' ? caller.userId : (caller.userId ?? caller.keyId);
}

/**
 * Feature requests: end users submit and vote through the SDK (scoped to the app its identity
 * headers name); staff triage them in the console (scoped to the caller's organization).
 */
@Injectable()
export class FeedbackService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly preferences: NotificationPreferencesService,
    private readonly notices: StaffNotices,
    private readonly push: PushOutbox,
  ) {}

  // ---- SDK ----

  async submit(tenant: Tenant, input: SubmitFeatureRequestDto): Promise<FeatureRequest> {
    const repository = this.dataSource.getRepository(FeatureRequest);
    const feature = await repository.save(
      repository.create({
        organizationId: tenant.organizationId,
        appId: tenant.appId,
        title: input.title,
        description: input.description ?? '',
        status: 'pending',
        submitterId: input.submitterId,
        deviceHash: input.deviceHash ?? null,
        voteCount: 0,
        commentCount: 0,
        voteThresholdNotifiedAt: null,
      }),
    );
    this.notices.toAdmins(tenant.organizationId, 'newFeatureRequest', (context) =>
      feedbackMail.newFeatureRequest(context, { ...feature, appName: tenant.appName }),
    );
    return feature;
  }

  /**
   * The app's requests. Requests waiting for triage (`pending`) are not public; a submitter
   * sees their own when the query names them.
   */
  async sdkList(tenant: Tenant, query: SdkFeatureListQuery): Promise<Page<FeatureRequest>> {
    const builder = this.dataSource
      .getRepository(FeatureRequest)
      .createQueryBuilder('feature_requests')
      .where('feature_requests.organization_id = :organizationId AND feature_requests.app_id = :appId', {
        organizationId: tenant.organizationId,
        appId: tenant.appId,
      });
    if (query.submitter_id) {
      builder.andWhere("(feature_requests.status <> 'pending' OR feature_requests.submitter_id = :submitterId)", {
        submitterId: query.submitter_id,
      });
    } else {
      builder.andWhere("feature_requests.status <> 'pending'");
    }
    if (query.status) builder.andWhere('feature_requests.status = :status', { status: query.status });
    return this.page(orderFeatures(builder, query.sort ?? 'votes'), query);
  }

  async sdkGet(tenant: Tenant, featureId: string): Promise<FeatureWithComments> {
    const feature = await this.dataSource
      .getRepository(FeatureRequest)
      .findOneBy({ id: featureId, organizationId: tenant.organizationId, appId: tenant.appId });
    if (!feature) throw featureRequestNotFound();
    return { feature, comments: await this.comments(feature.id) };
  }

  /**
   * One vote per user and per device: the unique indexes decide, so of two identical votes sent
   * at once one is counted and the other answers 409.
   */
  async vote(tenant: Tenant, featureId: string, input: VoteDto): Promise<FeatureRequestVote> {
    const preferences = await this.preferences.get(tenant.organizationId);
    const outcome = await this.dataSource.transaction(async (manager) => {
      const feature = await this.sdkFeatureIn(manager, tenant, featureId);
      const [vote] = await queryRows<{ id: string; created_at: Date }>(
        manager,
        `INSERT INTO feature_request_votes (organization_id, feature_request_id, voter_id, device_hash)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id, created_at`,
        [tenant.organizationId, featureId, input.voterId, input.deviceHash ?? null],
      );
      if (!vote) throw duplicateVote();
      const [counted] = await queryRows<{ vote_count: number }>(
        manager,
        `UPDATE feature_requests SET vote_count = vote_count + 1 WHERE id = $1 RETURNING vote_count`,
        [featureId],
      );
      // Claimed at most once per request, by whichever vote first finds it at the threshold.
      const crossed = preferences.featureVoteThreshold
        ? (
            await queryRows(
              manager,
              `UPDATE feature_requests SET vote_threshold_notified_at = now()
                WHERE id = $1 AND vote_threshold_notified_at IS NULL AND vote_count >= $2 RETURNING id`,
              [featureId, preferences.featureVoteThresholdCount],
            )
          ).length > 0
        : false;
      return { feature, vote, votes: counted.vote_count, crossed };
    });
    if (outcome.crossed) {
      this.notices.toAdminsNow(tenant.organizationId, (context) =>
        feedbackMail.voteThreshold(context, outcome.feature, outcome.votes, preferences.featureVoteThresholdCount),
      );
    }
    return {
      id: outcome.vote.id,
      organizationId: tenant.organizationId,
      featureRequestId: featureId,
      voterId: input.voterId,
      deviceHash: input.deviceHash ?? null,
      createdAt: outcome.vote.created_at,
    };
  }

  /** Removes the voter's vote; answers the same whether or not there was one. */
  async unvote(tenant: Tenant, featureId: string, voterId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await this.sdkFeatureIn(manager, tenant, featureId);
      await manager.query(
        `WITH removed AS (
           DELETE FROM feature_request_votes WHERE feature_request_id = $1 AND voter_id = $2 RETURNING 1
         )
         UPDATE feature_requests SET vote_count = vote_count - (SELECT count(*) FROM removed)
          WHERE id = $1 AND EXISTS (SELECT 1 FROM removed)`,
        [featureId, voterId],
      );
    });
  }

  /** The subscriber's push-channel records in this app, newest first. */
  async notifications(tenant: Tenant, query: NotificationsQuery): Promise<Page<PushNotification>> {
    const parameters = [tenant.organizationId, tenant.appId, query.subscriber_id];
    const where = `n.organization_id = $1 AND n.app_id = $2 AND n.subscriber_id = $3`;
    const { limit, offset } = pageWindow(query);
    const [rows, [count]] = await Promise.all([
      this.dataSource.query<
        {
          id: string;
          feature_request_id: string;
          title: string;
          comment_id: string;
          body: string;
          created_at: Date;
        }[]
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
      this.dataSource.query<{ total: number }[]>(
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

  // ---- Console ----

  async list(auth: OrgAuthContext, query: FeedbackListQuery): Promise<Page<FeatureRequest>> {
    const builder = this.dataSource
      .getRepository(FeatureRequest)
      .createQueryBuilder('feature_requests')
      .where('feature_requests.organization_id = :organizationId', { organizationId: auth.organizationId });
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
    return this.page(orderFeatures(builder, query.sort ?? 'votes'), query);
  }

  async get(auth: OrgAuthContext, featureId: string): Promise<FeatureWithComments> {
    const feature = await this.dataSource
      .getRepository(FeatureRequest)
      .findOneBy({ id: featureId, organizationId: auth.organizationId });
    if (!feature) throw featureRequestNotFound();
    return { feature, comments: await this.comments(feature.id) };
  }

  async setStatus(auth: OrgAuthContext, featureId: string, status: FeatureStatus): Promise<FeatureRequest> {
    const { feature, from } = await this.dataSource.transaction(async (manager) => {
      const locked = await this.consoleFeatureIn(manager, auth, featureId);
      const previous = locked.status;
      if (previous === status) return { feature: locked, from: previous };
      await manager.query(`UPDATE feature_requests SET status = $2, updated_at = now() WHERE id = $1`, [
        featureId,
        status,
      ]);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'feature_request.status_changed',
          resourceType: 'feature_request',
          resourceId: featureId,
          metadata: { from: previous, to: status },
        },
        manager,
      );
      return { feature: await manager.findOneByOrFail(FeatureRequest, { id: featureId }), from: previous };
    });
    if (from !== status) {
      this.notices.toAdmins(auth.organizationId, 'featureStatusChange', (context) =>
        feedbackMail.statusChanged(context, feature, from, status, auth.caller.email),
      );
    }
    return feature;
  }

  /**
   * A staff comment, and in the same transaction one push-channel record for the submitter and
   * each voter, so the devices following the request learn of it.
   */
  async comment(auth: OrgAuthContext, featureId: string, body: string): Promise<FeatureRequestComment> {
    return this.dataSource.transaction(async (manager) => {
      const feature = await this.consoleFeatureIn(manager, auth, featureId);
      const comment = await manager.save(
        manager.create(FeatureRequestComment, {
          organizationId: auth.organizationId,
          featureRequestId: featureId,
          authorId: staffAuthorId(auth),
          authorType: 'admin',
          body,
        }),
      );
      await manager.query(
        `UPDATE feature_requests SET comment_count = comment_count + 1, updated_at = now() WHERE id = $1`,
        [featureId],
      );
      const subscribers = await manager.query<{ subscriber_id: string }[]>(
        `INSERT INTO feedback_notifications (organization_id, app_id, feature_request_id, comment_id, subscriber_id, type)
         SELECT $1, $2::uuid, $3, $4, subscriber_id, 'staff_comment'
           FROM (SELECT submitter_id AS subscriber_id FROM feature_requests WHERE id = $3
                  UNION
                 SELECT voter_id FROM feature_request_votes WHERE feature_request_id = $3) subscribers
         RETURNING subscriber_id`,
        [auth.organizationId, feature.appId, featureId, comment.id],
      );
      await this.push.enqueue(
        manager,
        {
          organizationId: auth.organizationId,
          appId: feature.appId,
          subscriberIds: subscribers.map((row) => row.subscriber_id),
        },
        {
          title: `New comment on “${oneLine(feature.title)}”`,
          body,
          data: { type: 'feature_comment', featureRequestId: featureId, commentId: comment.id },
        },
      );
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'feature_request.commented',
          resourceType: 'feature_request',
          resourceId: featureId,
          metadata: { commentId: comment.id },
        },
        manager,
      );
      return comment;
    });
  }

  // ---- Shared ----

  private comments(featureId: string): Promise<FeatureRequestComment[]> {
    return this.dataSource
      .getRepository(FeatureRequestComment)
      .find({ where: { featureRequestId: featureId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  private async page(builder: SelectQueryBuilder<FeatureRequest>, query: PageQuery): Promise<Page<FeatureRequest>> {
    const { limit, offset } = pageWindow(query);
    const [items, total] = await builder.skip(offset).take(limit).getManyAndCount();
    return { items, total };
  }

  /**
   * The request of the tenant's app; 404 otherwise. Not locked: votes serialize on the counter
   * update, and a share lock here would deadlock two votes that both go on to update it.
   */
  private async sdkFeatureIn(manager: EntityManager, tenant: Tenant, featureId: string): Promise<FeatureRequest> {
    const feature = await manager.findOneBy(FeatureRequest, {
      id: featureId,
      organizationId: tenant.organizationId,
      appId: tenant.appId,
    });
    if (!feature) throw featureRequestNotFound();
    return feature;
  }

  private async consoleFeatureIn(manager: EntityManager, auth: OrgAuthContext, featureId: string) {
    const feature = await manager.findOne(FeatureRequest, {
      where: { id: featureId, organizationId: auth.organizationId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!feature) throw featureRequestNotFound();
    return feature;
  }
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
