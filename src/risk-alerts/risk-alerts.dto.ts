import { Transform, Type } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import {
  ALERT_CHANNELS,
  CONDITION_TYPES,
  MAX_COUNT_THRESHOLD,
  MAX_WINDOW_MINUTES,
  type AlertChannel,
  type AlertCondition,
  type ConditionType,
} from './risk-alert-rule.js';

export const NAME_MAX = 100;
export const DEFAULT_COOLDOWN_MINUTES = 60;
/** One week. */
export const MAX_COOLDOWN_MINUTES = 10_080;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** For fields that may be left out but not set to null. */
const given = (_object: object, value: unknown) => value !== undefined;

export class AlertConditionDto {
  @IsIn(CONDITION_TYPES, { message: `type must be one of ${CONDITION_TYPES.join(', ')}` })
  type!: ConditionType;

  @IsInt({ message: 'threshold must be an integer' })
  @Min(0, { message: 'threshold must be 0 or more' })
  @Max(MAX_COUNT_THRESHOLD, { message: `threshold must be at most ${MAX_COUNT_THRESHOLD}` })
  threshold!: number;

  @IsOptional()
  @IsInt({ message: 'windowMinutes must be an integer' })
  @Min(1, { message: `windowMinutes must be from 1 to ${MAX_WINDOW_MINUTES}` })
  @Max(MAX_WINDOW_MINUTES, { message: `windowMinutes must be from 1 to ${MAX_WINDOW_MINUTES}` })
  windowMinutes?: number | null;
}

export class CreateRiskAlertRuleDto {
  @Transform(trim)
  @IsString({ message: 'name is required' })
  @Length(1, NAME_MAX, { message: `name must be 1 to ${NAME_MAX} characters` })
  name!: string;

  @IsDefined({ message: 'condition is required' })
  @IsObject({ message: 'condition must be an object with type, threshold and windowMinutes' })
  @ValidateNested()
  @Type(() => AlertConditionDto)
  condition!: AlertConditionDto;

  @IsIn(ALERT_CHANNELS, { message: `channel must be one of ${ALERT_CHANNELS.join(', ')}` })
  channel!: AlertChannel;

  @ValidateIf(given)
  @IsInt({ message: `cooldownMinutes must be an integer from 1 to ${MAX_COOLDOWN_MINUTES}` })
  @Min(1, { message: `cooldownMinutes must be an integer from 1 to ${MAX_COOLDOWN_MINUTES}` })
  @Max(MAX_COOLDOWN_MINUTES, { message: `cooldownMinutes must be an integer from 1 to ${MAX_COOLDOWN_MINUTES}` })
  cooldownMinutes?: number;

  @ValidateIf(given)
  @IsBoolean({ message: 'isActive must be a boolean' })
  isActive?: boolean;

  /** Only this app's events; null or left out: every app of the organization. */
  @IsOptional()
  @IsUUID('all', { message: 'appId must be a UUID or null' })
  appId?: string | null;
}

/** Any subset; a `condition` replaces the whole condition. */
export class UpdateRiskAlertRuleDto {
  @ValidateIf(given)
  @Transform(trim)
  @IsString({ message: 'name must be a string' })
  @Length(1, NAME_MAX, { message: `name must be 1 to ${NAME_MAX} characters` })
  name?: string;

  @ValidateIf(given)
  @IsObject({ message: 'condition must be an object with type, threshold and windowMinutes' })
  @ValidateNested()
  @Type(() => AlertConditionDto)
  condition?: AlertConditionDto;

  @ValidateIf(given)
  @IsIn(ALERT_CHANNELS, { message: `channel must be one of ${ALERT_CHANNELS.join(', ')}` })
  channel?: AlertChannel;

  @ValidateIf(given)
  @IsInt({ message: `cooldownMinutes must be an integer from 1 to ${MAX_COOLDOWN_MINUTES}` })
  @Min(1, { message: `cooldownMinutes must be an integer from 1 to ${MAX_COOLDOWN_MINUTES}` })
  @Max(MAX_COOLDOWN_MINUTES, { message: `cooldownMinutes must be an integer from 1 to ${MAX_COOLDOWN_MINUTES}` })
  cooldownMinutes?: number;

  @ValidateIf(given)
  @IsBoolean({ message: 'isActive must be a boolean' })
  isActive?: boolean;

  @IsOptional()
  @IsUUID('all', { message: 'appId must be a UUID or null' })
  appId?: string | null;
}

/** A stored rule as the service reads it. */
export interface StoredRiskAlertRule {
  id: string;
  organizationId: string;
  appId: string | null;
  name: string;
  condition: AlertCondition;
  channel: AlertChannel;
  cooldownMinutes: number;
  isActive: boolean;
  lastFiredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RiskAlertRuleResponse {
  id: string;
  name: string;
  /** The app the rule watches; null for every app of the organization. */
  appId: string | null;
  condition: {
    type: StoredRiskAlertRule['condition']['type'];
    threshold: number;
    windowMinutes: number | null;
  };
  channel: StoredRiskAlertRule['channel'];
  cooldownMinutes: number;
  isActive: boolean;
  lastFiredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toRiskAlertRuleResponse(rule: StoredRiskAlertRule): RiskAlertRuleResponse {
  return {
    id: rule.id,
    name: rule.name,
    appId: rule.appId,
    condition: {
      type: rule.condition.type,
      threshold: rule.condition.threshold,
      windowMinutes: rule.condition.windowMinutes,
    },
    channel: rule.channel,
    cooldownMinutes: rule.cooldownMinutes,
    isActive: rule.isActive,
    lastFiredAt: rule.lastFiredAt,
    createdAt: rule.createdAt,
    updatedAt: rule.updatedAt,
  };
}
