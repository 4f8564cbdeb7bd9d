import { randomUUID } from 'node:crypto';
import type { Tenant } from '../../src/apps/tenant-resolver.js';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import {
  FeatureRequest,
  FeatureRequestComment,
  type FeatureStatus,
} from '../../src/feedback/feature-request.entity.js';
import type {
  FeedbackListQuery,
  NotificationsQuery,
  PushNotification,
  SdkFeatureListQuery,
} from '../../src/feedback/feedback.dto.js';
import type { FeedbackRepository, NewFeatureRequest } from '../../src/feedback/feedback.repository.js';

const copy = <T extends object>(row: T): T =>
  Object.assign(Object.create(Object.getPrototypeOf(row) as object) as T, row);

/** Feature requests, comments, votes and push-channel records in memory. */
export class FakeFeedbackRepository implements Pick<FeedbackRepository, keyof FeedbackRepository> {
  readonly features = new Map<string, FeatureRequest>();
  readonly commentRows: FeatureRequestComment[] = [];
  readonly votes: { featureId: string; voterId: string; deviceHash: string | null; id: string; created_at: Date }[] =
    [];
  readonly notices: { featureId: string; commentId: string; subscriberId: string; appId: string | null; at: Date }[] =
    [];

  submit(tenant: Tenant, input: NewFeatureRequest) {
    const now = new Date();
    const feature = Object.assign(new FeatureRequest(), {
      ...input,
      id: randomUUID(),
      organizationId: tenant.organizationId,
      appId: tenant.appId,
      status: 'pending',
      voteCount: 0,
      commentCount: 0,
      voteThresholdNotifiedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    this.features.set(feature.id, feature);
    return Promise.resolve(copy(feature));
  }

  sdkPage(tenant: Tenant, query: SdkFeatureListQuery) {
    const items = [...this.features.values()].filter(
      (feature) =>
        feature.organizationId === tenant.organizationId &&
        feature.appId === tenant.appId &&
        (feature.status !== 'pending' || feature.submitterId === query.submitter_id) &&
        (!query.status || feature.status === query.status),
    );
    return Promise.resolve({ items: items.map(copy), total: items.length });
  }

  page(organizationId: OrganizationId, query: FeedbackListQuery) {
    const items = [...this.features.values()].filter(
      (feature) => feature.organizationId === organizationId && (!query.status || feature.status === query.status),
    );
    return Promise.resolve({ items: items.map(copy), total: items.length });
  }

  findInApp(tenant: Tenant, featureId: string) {
    const feature = this.features.get(featureId);
    return Promise.resolve(
      feature && feature.organizationId === tenant.organizationId && feature.appId === tenant.appId
        ? copy(feature)
        : null,
    );
  }

  find(organizationId: OrganizationId, featureId: string) {
    const feature = this.features.get(featureId);
    return Promise.resolve(feature && feature.organizationId === organizationId ? copy(feature) : null);
  }

  comments(feature: FeatureRequest) {
    return Promise.resolve(this.commentRows.filter((comment) => comment.featureRequestId === feature.id).map(copy));
  }

  addVote(feature: FeatureRequest, voterId: string, deviceHash: string | null) {
    const taken = this.votes.some(
      (vote) =>
        vote.featureId === feature.id &&
        (vote.voterId === voterId || (deviceHash !== null && vote.deviceHash === deviceHash)),
    );
    if (taken) return Promise.resolve(null);
    const vote = { featureId: feature.id, voterId, deviceHash, id: randomUUID(), created_at: new Date() };
    this.votes.push(vote);
    const stored = this.features.get(feature.id)!;
    stored.voteCount += 1;
    return Promise.resolve({ vote: { id: vote.id, created_at: vote.created_at }, votes: stored.voteCount });
  }

  claimVoteThreshold(feature: FeatureRequest, threshold: number) {
    const stored = this.features.get(feature.id)!;
    if (stored.voteThresholdNotifiedAt || stored.voteCount < threshold) return Promise.resolve(false);
    stored.voteThresholdNotifiedAt = new Date();
    return Promise.resolve(true);
  }

  removeVote(feature: FeatureRequest, voterId: string) {
    const index = this.votes.findIndex((vote) => vote.featureId === feature.id && vote.voterId === voterId);
    if (index >= 0) {
      this.votes.splice(index, 1);
      this.features.get(feature.id)!.voteCount -= 1;
    }
    return Promise.resolve();
  }

  setStatus(organizationId: OrganizationId, featureId: string, status: FeatureStatus) {
    const stored = this.features.get(featureId);
    if (!stored || stored.organizationId !== organizationId) throw new Error('no such feature request');
    stored.status = status;
    return Promise.resolve(copy(stored));
  }

  addStaffComment(feature: FeatureRequest, authorId: string, body: string) {
    const comment = Object.assign(new FeatureRequestComment(), {
      id: randomUUID(),
      organizationId: feature.organizationId,
      featureRequestId: feature.id,
      authorId,
      authorType: 'admin',
      body,
      createdAt: new Date(),
    });
    this.commentRows.push(comment);
    this.features.get(feature.id)!.commentCount += 1;
    const subscriberIds = [
      ...new Set([feature.submitterId, ...this.votes.filter((v) => v.featureId === feature.id).map((v) => v.voterId)]),
    ];
    for (const subscriberId of subscriberIds) {
      this.notices.push({
        featureId: feature.id,
        commentId: comment.id,
        subscriberId,
        appId: feature.appId,
        at: new Date(),
      });
    }
    return Promise.resolve({ comment: copy(comment), subscriberIds });
  }

  notifications(tenant: Tenant, query: NotificationsQuery) {
    const items: PushNotification[] = this.notices
      .filter((notice) => notice.appId === tenant.appId && notice.subscriberId === query.subscriber_id)
      .map((notice) => ({
        id: `${notice.commentId}/${notice.subscriberId}`,
        featureRequestId: notice.featureId,
        featureTitle: this.features.get(notice.featureId)?.title ?? '',
        commentId: notice.commentId,
        body: this.commentRows.find((comment) => comment.id === notice.commentId)?.body ?? '',
        createdAt: notice.at,
      }));
    return Promise.resolve({ items, total: items.length });
  }
}
