import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { tierDisplayName } from '../common/tiers.js';
import type { AuditLog } from '../audit/audit-log.entity.js';
import type { Organization } from './organization.entity.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class UpdateSettingsDto {
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  name!: string;
}

export const VOTE_THRESHOLD_MIN = 1;
export const VOTE_THRESHOLD_MAX = 10_000;

/** Any subset of the preference fields. */
export class UpdateNotificationPreferencesDto {
  @IsOptional() @IsBoolean() newFeatureRequest?: boolean;
  @IsOptional() @IsBoolean() featureVoteThreshold?: boolean;

  @IsOptional()
  @IsInt({ message: 'featureVoteThresholdCount must be an integer' })
  @Min(VOTE_THRESHOLD_MIN, {
    message: `featureVoteThresholdCount must be from ${VOTE_THRESHOLD_MIN} to ${VOTE_THRESHOLD_MAX}`,
  })
  @Max(VOTE_THRESHOLD_MAX, {
    message: `featureVoteThresholdCount must be from ${VOTE_THRESHOLD_MIN} to ${VOTE_THRESHOLD_MAX}`,
  })
  featureVoteThresholdCount?: number;

  @IsOptional() @IsBoolean() featureStatusChange?: boolean;
  @IsOptional() @IsBoolean() newSupportTicket?: boolean;
  @IsOptional() @IsBoolean() ticketAdminReply?: boolean;
  @IsOptional() @IsBoolean() ticketResolved?: boolean;
  @IsOptional() @IsBoolean() ticketUserReply?: boolean;
  @IsOptional() @IsBoolean() flagToggle?: boolean;
  @IsOptional() @IsBoolean() teamInvite?: boolean;
  @IsOptional() @IsBoolean() usageAlert?: boolean;
}

export const AUDIT_LOG_DEFAULT_PER = 50;

/** `page` and `per` (default 50, at most 100), newest entries first. */
export class AuditLogQueryDto extends PageQuery {
  override per = AUDIT_LOG_DEFAULT_PER;
}

export interface OrganizationSettingsResponse {
  id: string;
  name: string;
  slug: string;
  /** The plan's display name (`Pro`). */
  serviceTier: string;
  /** The plan as stored (`pro`). */
  serviceTierRawValue: string;
  billingEmail: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toSettingsResponse(organization: Organization): OrganizationSettingsResponse {
  return {
    id: organization.id,
    name: organization.name,
    slug: organization.slug,
    serviceTier: tierDisplayName(organization.serviceTier),
    serviceTierRawValue: organization.serviceTier,
    billingEmail: organization.billingEmail,
    createdAt: organization.createdAt,
    updatedAt: organization.updatedAt,
  };
}

export interface AuditEntryResponse {
  id: string;
  actorEmail: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  metadata: Record<string, unknown>;
  ipAddress: string | null;
  createdAt: Date;
}

export function toAuditEntryResponse(entry: AuditLog): AuditEntryResponse {
  return {
    id: entry.id,
    actorEmail: entry.actorEmail,
    action: entry.action,
    resourceType: entry.resourceType,
    resourceId: entry.resourceId,
    metadata: entry.metadata,
    ipAddress: entry.ipAddress,
    createdAt: entry.createdAt,
  };
}
