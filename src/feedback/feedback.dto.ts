import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, IsUUID, Length, Matches, MaxLength } from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import {
  FEATURE_STATUSES,
  type FeatureRequest,
  type FeatureRequestComment,
  type FeatureRequestVote,
  type FeatureStatus,
} from './feature-request.entity.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export const STAFF_COMMENT_MAX = 5_000;

const statusMessage = { message: `status must be one of: ${FEATURE_STATUSES.join(', ')}` };

// ---- SDK surface (camelCase) ----

export class SubmitFeatureRequestDto {
  @Transform(trim)
  @IsString()
  @Length(3, 200, { message: 'title must be 3 to 200 characters' })
  title!: string;

  @IsOptional()
  @IsString()
  @MaxLength(5_000, { message: 'description must be at most 5000 characters' })
  description?: string;

  @Transform(trim)
  @IsString()
  @Length(1, 200, { message: 'submitterId must be 1 to 200 characters' })
  submitterId!: string;

  @IsOptional()
  @IsString()
  @Length(1, 200, { message: 'deviceHash must be 1 to 200 characters' })
  deviceHash?: string;
}

export const SDK_SORTS = ['votes', 'newest'] as const;

export class SdkFeatureListQuery extends PageQuery {
  @IsOptional()
  @IsIn(SDK_SORTS, { message: `sort must be one of: ${SDK_SORTS.join(', ')}` })
  sort?: (typeof SDK_SORTS)[number];

  @IsOptional()
  @IsIn(FEATURE_STATUSES, statusMessage)
  status?: FeatureStatus;

  /** Adds this submitter's own requests still waiting for triage (`pending`). */
  @IsOptional()
  @IsString()
  @Length(1, 200)
  submitter_id?: string;
}

export class VoteDto {
  @Transform(trim)
  @IsString()
  @Length(1, 200, { message: 'voterId must be 1 to 200 characters' })
  voterId!: string;

  @IsOptional()
  @IsString()
  @Length(1, 200, { message: 'deviceHash must be 1 to 200 characters' })
  deviceHash?: string;
}

export class UnvoteQuery {
  @Transform(trim)
  @IsString()
  @Length(1, 200, { message: 'voter_id is required (1 to 200 characters)' })
  voter_id!: string;
}

export class NotificationsQuery extends PageQuery {
  @Transform(trim)
  @IsString()
  @Length(1, 200, { message: 'subscriber_id is required (1 to 200 characters)' })
  subscriber_id!: string;
}

// ---- Console (snake_case) ----

export const CONSOLE_SORTS = ['votes', 'newest', 'oldest'] as const;
export type ConsoleSort = (typeof CONSOLE_SORTS)[number];

export class FeedbackListQuery extends PageQuery {
  @IsOptional()
  @IsIn(FEATURE_STATUSES, statusMessage)
  status?: FeatureStatus;

  @IsOptional()
  @IsUUID('all', { message: 'app_id must be a UUID' })
  app_id?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200, { message: 'search must be at most 200 characters' })
  search?: string;

  @IsOptional()
  @IsIn(CONSOLE_SORTS, { message: `sort must be one of: ${CONSOLE_SORTS.join(', ')}` })
  sort?: ConsoleSort;
}

export class FeatureStatusDto {
  @IsIn(FEATURE_STATUSES, statusMessage)
  status!: FeatureStatus;
}

export class StaffCommentDto {
  @IsString({ message: 'body must be a string' })
  @Matches(/\S/, { message: 'body must not be empty' })
  @MaxLength(STAFF_COMMENT_MAX, { message: `body must be at most ${STAFF_COMMENT_MAX} characters` })
  body!: string;
}

// ---- Responses ----

/** A feature request on the console surface (snake_case). */
export interface ConsoleFeatureResponse {
  id: string;
  app_id: string | null;
  title: string;
  description: string;
  status: FeatureRequest['status'];
  submitter_id: string;
  vote_count: number;
  comment_count: number;
  created_at: Date;
  updated_at: Date;
}

export function toConsoleFeature(feature: FeatureRequest): ConsoleFeatureResponse {
  return {
    id: feature.id,
    app_id: feature.appId,
    title: feature.title,
    description: feature.description,
    status: feature.status,
    submitter_id: feature.submitterId,
    vote_count: feature.voteCount,
    comment_count: feature.commentCount,
    created_at: feature.createdAt,
    updated_at: feature.updatedAt,
  };
}

export interface ConsoleCommentResponse {
  id: string;
  author_id: string;
  author_type: FeatureRequestComment['authorType'];
  body: string;
  created_at: Date;
}

export function toConsoleComment(comment: FeatureRequestComment): ConsoleCommentResponse {
  return {
    id: comment.id,
    author_id: comment.authorId,
    author_type: comment.authorType,
    body: comment.body,
    created_at: comment.createdAt,
  };
}

/** The SDK form leaves out submitter and author ids: they identify other end users and staff. */
/** A feature request as the app sees it. */
export interface SdkFeatureResponse {
  id: string;
  appId: string | null;
  title: string;
  description: string;
  status: FeatureRequest['status'];
  voteCount: number;
  commentCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export function toSdkFeature(feature: FeatureRequest): SdkFeatureResponse {
  return {
    id: feature.id,
    appId: feature.appId,
    title: feature.title,
    description: feature.description,
    status: feature.status,
    voteCount: feature.voteCount,
    commentCount: feature.commentCount,
    createdAt: feature.createdAt,
    updatedAt: feature.updatedAt,
  };
}

export interface SdkCommentResponse {
  id: string;
  authorType: FeatureRequestComment['authorType'];
  body: string;
  createdAt: Date;
}

export function toSdkComment(comment: FeatureRequestComment): SdkCommentResponse {
  return { id: comment.id, authorType: comment.authorType, body: comment.body, createdAt: comment.createdAt };
}

export interface VoteResponse {
  id: string;
  featureRequestId: string;
  createdAt: Date;
}

export function toVoteResponse(vote: Pick<FeatureRequestVote, 'id' | 'featureRequestId' | 'createdAt'>): VoteResponse {
  return { id: vote.id, featureRequestId: vote.featureRequestId, createdAt: vote.createdAt };
}

export interface PushNotification {
  id: string;
  featureRequestId: string;
  featureTitle: string;
  commentId: string;
  body: string;
  createdAt: Date;
}

/** A staff comment on a feature request the device voted for or submitted. */
export interface FeedbackNotificationResponse {
  id: string;
  type: 'staff_comment';
  featureRequestId: string;
  featureTitle: string;
  commentId: string;
  body: string;
  createdAt: Date;
}

export function toNotificationResponse(notification: PushNotification): FeedbackNotificationResponse {
  return {
    id: notification.id,
    type: 'staff_comment' as const,
    featureRequestId: notification.featureRequestId,
    featureTitle: notification.featureTitle,
    commentId: notification.commentId,
    body: notification.body,
    createdAt: notification.createdAt,
  };
}
