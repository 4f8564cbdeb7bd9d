import { Injectable } from '@nestjs/common';
import type { Tenant } from '../apps/tenant-resolver.js';
import { AuditService } from '../audit/audit.service.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { NotificationPreferencesService } from '../organizations/notification-preferences.service.js';
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
import type {
  FeatureRequest,
  FeatureRequestComment,
  FeatureRequestVote,
  FeatureStatus,
} from './feature-request.entity.js';
import { FeedbackRepository } from './feedback.repository.js';
import { StaffNotices } from './staff-notices.js';
import { oneLine } from '../common/one-line.js';
import { PushOutbox } from '../push/push-outbox.js';

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
 * headers name); staff triage them in the console (scoped to the caller's organization). Mails
 * go out after the change commits.
 */
@Injectable()
export class FeedbackService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly features: FeedbackRepository,
    private readonly audit: AuditService,
    private readonly preferences: NotificationPreferencesService,
    private readonly notices: StaffNotices,
    private readonly push: PushOutbox,
  ) {}

  // ---- SDK ----

  async submit(tenant: Tenant, input: SubmitFeatureRequestDto): Promise<FeatureRequest> {
    const feature = await this.features.submit(tenant, {
      title: input.title,
      description: input.description ?? '',
      submitterId: input.submitterId,
      deviceHash: input.deviceHash ?? null,
    });
    await this.uow.afterCommit(() =>
      this.notices.toAdmins(tenant.organizationId, 'newFeatureRequest', (context) =>
        feedbackMail.newFeatureRequest(context, { ...feature, appName: tenant.appName }),
      ),
    );
    return feature;
  }

  /**
   * The app's requests. Requests waiting for triage (`pending`) are not public; a submitter
   * sees their own when the query names them.
   */
  sdkList(tenant: Tenant, query: SdkFeatureListQuery): Promise<Page<FeatureRequest>> {
    return this.features.sdkPage(tenant, query);
  }

  async sdkGet(tenant: Tenant, featureId: string): Promise<FeatureWithComments> {
    const feature = await this.sdkFeature(tenant, featureId);
    return { feature, comments: await this.features.comments(feature) };
  }

  /**
   * One vote per user and per device: the unique indexes decide, so of two identical votes sent
   * at once one is counted and the other answers 409. The request is not locked: votes serialize
   * on the counter update, and a share lock here would deadlock two votes that both go on to
   * update it.
   */
  async vote(tenant: Tenant, featureId: string, input: VoteDto): Promise<FeatureRequestVote> {
    const preferences = await this.preferences.get(tenant.organizationId);
    const vote = await this.uow.run(async () => {
      const feature = await this.sdkFeature(tenant, featureId);
      const counted = await this.features.addVote(feature, input.voterId, input.deviceHash ?? null);
      if (!counted) throw duplicateVote();
      // Claimed at most once per request, by whichever vote first finds it at the threshold.
      const threshold = preferences.featureVoteThresholdCount;
      if (preferences.featureVoteThreshold && (await this.features.claimVoteThreshold(feature, threshold))) {
        await this.uow.afterCommit(() =>
          this.notices.toAdminsNow(tenant.organizationId, (context) =>
            feedbackMail.voteThreshold(context, feature, counted.votes, threshold),
          ),
        );
      }
      return counted.vote;
    });
    return {
      id: vote.id,
      organizationId: tenant.organizationId,
      featureRequestId: featureId,
      voterId: input.voterId,
      deviceHash: input.deviceHash ?? null,
      createdAt: vote.created_at,
    };
  }

  /** Removes the voter's vote; answers the same whether or not there was one. */
  async unvote(tenant: Tenant, featureId: string, voterId: string): Promise<void> {
    await this.uow.run(async () => {
      await this.features.removeVote(await this.sdkFeature(tenant, featureId), voterId);
    });
  }

  /** The subscriber's push-channel records in this app, newest first. */
  notifications(tenant: Tenant, query: NotificationsQuery): Promise<Page<PushNotification>> {
    return this.features.notifications(tenant, query);
  }

  // ---- Console ----

  list(auth: OrgAuthContext, query: FeedbackListQuery): Promise<Page<FeatureRequest>> {
    return this.features.page(auth.organizationId, query);
  }

  async get(auth: OrgAuthContext, featureId: string): Promise<FeatureWithComments> {
    const feature = await this.features.find(auth.organizationId, featureId);
    if (!feature) throw featureRequestNotFound();
    return { feature, comments: await this.features.comments(feature) };
  }

  setStatus(auth: OrgAuthContext, featureId: string, status: FeatureStatus): Promise<FeatureRequest> {
    return this.uow.run(async () => {
      const locked = await this.consoleFeature(auth, featureId);
      const from = locked.status;
      if (from === status) return locked;
      const feature = await this.features.setStatus(auth.organizationId, featureId, status);
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'feature_request.status_changed',
        resourceType: 'feature_request',
        resourceId: featureId,
        metadata: { from, to: status },
      });
      await this.uow.afterCommit(() =>
        this.notices.toAdmins(auth.organizationId, 'featureStatusChange', (context) =>
          feedbackMail.statusChanged(context, feature, from, status, auth.caller.email),
        ),
      );
      return feature;
    });
  }

  /**
   * A staff comment, and in the same unit of work one push-channel record and push for the
   * submitter and each voter, so the devices following the request learn of it.
   */
  comment(auth: OrgAuthContext, featureId: string, body: string): Promise<FeatureRequestComment> {
    return this.uow.run(async () => {
      const feature = await this.consoleFeature(auth, featureId);
      const { comment, subscriberIds } = await this.features.addStaffComment(feature, staffAuthorId(auth), body);
      await this.push.enqueue(
        auth.organizationId,
        { appId: feature.appId, subscriberIds },
        {
          title: `New comment on “${oneLine(feature.title)}”`,
          body,
          data: { type: 'feature_comment', featureRequestId: featureId, commentId: comment.id },
        },
      );
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'feature_request.commented',
        resourceType: 'feature_request',
        resourceId: featureId,
        metadata: { commentId: comment.id },
      });
      return comment;
    });
  }

  // ---- Shared ----

  private async sdkFeature(tenant: Tenant, featureId: string): Promise<FeatureRequest> {
    const feature = await this.features.findInApp(tenant, featureId);
    if (!feature) throw featureRequestNotFound();
    return feature;
  }

  private async consoleFeature(auth: OrgAuthContext, featureId: string): Promise<FeatureRequest> {
    const feature = await this.features.find(auth.organizationId, featureId, { lock: true });
    if (!feature) throw featureRequestNotFound();
    return feature;
  }
}
