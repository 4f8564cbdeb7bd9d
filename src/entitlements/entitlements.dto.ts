import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsISO8601, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { ENTITLEMENT_ENVIRONMENTS, ENTITLEMENT_INTERVALS, ENTITLEMENT_STATUSES } from './entitlement-state.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** The source reports "no expiry" as null, an empty string or nothing at all. */
const emptyAsNull = ({ value }: { value: unknown }) => (value === '' ? null : value);

/**
 * One normalized subscription event (snake_case, as the payment sources and the webhooks name
 * them). Each event is the subject's whole state: an optional field left out means empty, not
 * unchanged.
 */
export class EntitlementEventDto {
  @Transform(trim)
  @IsString()
  @Length(1, 200)
  event_id!: string;

  @Transform(trim)
  @IsString()
  @Length(1, 200)
  subject_id!: string;

  @IsIn(ENTITLEMENT_STATUSES, { message: `status must be one of ${ENTITLEMENT_STATUSES.join(', ')}` })
  status!: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  tier?: string;

  @IsOptional()
  @IsIn(ENTITLEMENT_INTERVALS, { message: `interval must be one of ${ENTITLEMENT_INTERVALS.join(', ')}` })
  interval?: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  source?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  product_id?: string;

  @IsOptional()
  @Transform(emptyAsNull)
  @IsISO8601({ strict: true }, { message: 'expires_at must be an ISO 8601 timestamp or null' })
  expires_at?: string | null;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  source_subscription_id?: string;

  @IsOptional()
  @IsIn(ENTITLEMENT_ENVIRONMENTS, { message: `environment must be one of ${ENTITLEMENT_ENVIRONMENTS.join(', ')}` })
  environment?: string;

  @IsOptional()
  @IsBoolean()
  auto_renew?: boolean;
}
