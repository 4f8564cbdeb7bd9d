import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDate,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxDate,
  MaxLength,
  Min,
  MinDate,
  ValidateNested,
} from 'class-validator';
import { IsDecimalNumber } from '../common/validation/decimal-places.js';
import { CONDITION_OPERATORS } from '../common/rules/operators.js';
import { ENVIRONMENTS, FLAG_VALUE_TYPES, type Environment, type FlagValueType } from './evaluation/flag-types.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class FlagConditionDto {
  @IsString()
  @Length(1, 100)
  attribute!: string;

  @IsIn(CONDITION_OPERATORS, { message: `operator must be one of: ${CONDITION_OPERATORS.join(', ')}` })
  operator!: (typeof CONDITION_OPERATORS)[number];

  @IsString()
  @MaxLength(2000)
  value!: string;
}

export class FlagRuleDto {
  @IsString()
  @Length(1, 100)
  name!: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  priority?: number;

  @IsOptional()
  @IsBoolean()
  isActive?: boolean;

  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => FlagConditionDto)
  conditions!: FlagConditionDto[];

  @IsOptional()
  @IsDecimalNumber(3)
  @Min(0)
  @Max(100)
  rolloutPercentage?: number | null;

  @IsString()
  @MaxLength(10_000)
  value!: string;
}

export const FLAG_KEY_FORMAT = /^[A-Za-z][A-Za-z0-9_.-]{0,99}$/;

export class FlagPrerequisiteDto {
  @Matches(FLAG_KEY_FORMAT, { message: 'flagKey must be the key of a flag of this app' })
  flagKey!: string;

  @IsString()
  @MaxLength(10_000)
  value!: string;
}

export class EnvironmentConfigDto {
  @IsBoolean()
  enabled!: boolean;

  @IsString()
  @MaxLength(10_000)
  value!: string;

  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => FlagRuleDto)
  rules!: FlagRuleDto[];

  /** Flags of the same app that must hold these values (Business and up); left out, they stay as they are. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => FlagPrerequisiteDto)
  prerequisites?: FlagPrerequisiteDto[];
}

export class CreateFlagDto {
  @Transform(trim)
  @Matches(/^[A-Za-z][A-Za-z0-9_.-]{0,99}$/, {
    message: 'key must start with a letter and hold letters, digits, underscore, dot or hyphen (at most 100)',
  })
  key!: string;

  @Transform(trim)
  @IsString()
  @Length(1, 200)
  name!: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @IsIn(FLAG_VALUE_TYPES, { message: `valueType must be one of: ${FLAG_VALUE_TYPES.join(', ')}` })
  valueType!: FlagValueType;

  @IsString()
  @MaxLength(10_000)
  defaultValue!: string;
}

export class UpdateFlagDto {
  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, 200)
  name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  defaultValue?: string;
}

export class RollbackDto {
  @IsInt()
  @Min(1)
  // The column is a 32-bit integer: a larger number is no version, not a database error.
  @Max(2_147_483_647)
  version!: number;
}

export class CreateOverrideDto {
  @Transform(trim)
  @IsString()
  @Length(1, 200, { message: 'deviceKeyId must not be empty' })
  deviceKeyId!: string;

  @IsString()
  @Length(1, 10_000, { message: 'forcedValue must not be empty' })
  forcedValue!: string;

  @IsOptional()
  @Type(() => Date)
  @IsDate({ message: 'expiresAt must be an ISO 8601 timestamp' })
  @MinDate(() => new Date(), { message: 'expiresAt must be in the future' })
  expiresAt?: Date;
}

export class EvaluateFlagDto {
  @IsOptional()
  @IsString()
  @MaxLength(50)
  environment?: string;

  @IsOptional() @IsString() @MaxLength(100) deviceModel?: string;
  @IsOptional() @IsString() @MaxLength(50) osVersion?: string;
  @IsOptional() @IsString() @MaxLength(50) appVersion?: string;
  @IsOptional() @IsString() @MaxLength(200) deviceId?: string;
  @IsOptional() @IsInt() @Min(0) @Max(100) riskScore?: number;
  @IsOptional() @IsString() @MaxLength(35) locale?: string;
  @IsOptional() @IsString() @MaxLength(10) country?: string;
  @IsOptional() @IsString() @MaxLength(200) userId?: string;
  @IsOptional() @IsString() @MaxLength(50) attestationStatus?: string;

  @IsOptional()
  @IsObject()
  custom?: Record<string, string>;
}

/** The part of an environment a scheduled change sets; what it leaves out stays as it is then. */
export class ScheduledChangeDto {
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  value?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => FlagRuleDto)
  rules?: FlagRuleDto[];
}

/** How far ahead a change may be scheduled. */
export const MAX_SCHEDULE_AHEAD_DAYS = 366;

export class CreateScheduleDto {
  @IsIn(ENVIRONMENTS, { message: `environment must be one of: ${ENVIRONMENTS.join(', ')}` })
  environment!: Environment;

  @Type(() => Date)
  @IsDate({ message: 'runAt must be an ISO 8601 timestamp' })
  @MinDate(() => new Date(), { message: 'runAt must be in the future' })
  @MaxDate(() => new Date(Date.now() + MAX_SCHEDULE_AHEAD_DAYS * 86_400_000), {
    message: `runAt must be within ${MAX_SCHEDULE_AHEAD_DAYS} days`,
  })
  runAt!: Date;

  @IsObject()
  @ValidateNested()
  @Type(() => ScheduledChangeDto)
  change!: ScheduledChangeDto;
}

export class SetApprovalDto {
  @IsBoolean()
  requireApproval!: boolean;
}

export class ListChangeRequestsQuery {
  @IsOptional()
  @IsIn(['pending', 'approved', 'rejected', 'applied', 'stale'], {
    message: 'state must be one of: pending, approved, rejected, applied, stale',
  })
  state?: string;

  @IsOptional()
  @IsUUID('all', { message: 'flagId must be a UUID' })
  flagId?: string;
}
