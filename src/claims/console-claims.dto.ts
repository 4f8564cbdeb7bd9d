import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { CLAIM_DATA_TYPES, CLAIM_TYPES, type ClaimDataType, type ClaimType } from './engine/index.js';
import {
  MAX_CLAIM_KEY_LENGTH,
  MAX_CLAIM_NAME_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_PRIORITY,
  type ClaimConfiguration,
  type ClaimInput,
  type ClaimPatch,
  type ClaimTestInput,
} from './claim-input.js';
import type { DeviceProfileInput } from './preview-device.js';
import { IsAdditionalData, IsClaimKey } from './claim-validators.js';
import { MAX_REORDER_IDS } from './claims.dto.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** The console surface: the session model with snake_case top-level names. */
class ConsoleConfigurationFields {
  @IsOptional()
  @IsString()
  static_value?: string | null;

  @IsOptional()
  @IsArray()
  conditional_rules?: unknown[] | null;

  @IsOptional()
  @IsString()
  dynamic_expression?: string | null;

  @IsOptional()
  @IsObject()
  external_config?: Record<string, unknown> | null;

  @IsOptional()
  @IsObject()
  validation_rules?: Record<string, unknown> | null;
}

export class ConsoleCreateClaimDto extends ConsoleConfigurationFields {
  @IsClaimKey()
  claim_key!: string;

  @Transform(trim)
  @IsString()
  @Length(1, MAX_CLAIM_NAME_LENGTH)
  claim_name!: string;

  @IsIn(CLAIM_TYPES)
  claim_type!: ClaimType;

  @IsIn(CLAIM_DATA_TYPES)
  data_type!: ClaimDataType;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string | null;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_PRIORITY)
  priority?: number;

  @IsOptional()
  @IsBoolean()
  is_active?: boolean;
}

export class ConsoleUpdateClaimDto extends ConsoleConfigurationFields {
  @IsOptional()
  @IsString()
  claim_key?: string;

  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, MAX_CLAIM_NAME_LENGTH)
  claim_name?: string;

  @IsOptional()
  @IsIn(CLAIM_TYPES)
  claim_type?: ClaimType;

  @IsOptional()
  @IsIn(CLAIM_DATA_TYPES)
  data_type?: ClaimDataType;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string | null;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_PRIORITY)
  priority?: number;

  @IsOptional()
  @IsBoolean()
  is_active?: boolean;
}

export class ConsoleTestClaimDefinitionDto extends ConsoleConfigurationFields {
  @IsOptional()
  @IsClaimKey()
  claim_key?: string;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_CLAIM_NAME_LENGTH)
  claim_name?: string;

  @IsIn(CLAIM_TYPES)
  claim_type!: ClaimType;

  @IsIn(CLAIM_DATA_TYPES)
  data_type!: ClaimDataType;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string | null;

  @IsOptional()
  @IsInt()
  priority?: number;

  @IsOptional()
  @IsBoolean()
  is_active?: boolean;
}

/** Every field optional: unset ones take the preview device's defaults. */
export class ConsoleDeviceContextDto {
  @IsOptional()
  @IsString()
  @Length(1, 200)
  key_id?: string;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  device_model?: string;

  @IsOptional()
  @IsString()
  @MaxLength(50)
  os_version?: string;

  @IsOptional()
  @IsString()
  @MaxLength(50)
  app_version?: string;

  @IsOptional()
  @Matches(/^[A-Za-z]{2}$/, { message: 'country must be an ISO 3166-1 alpha-2 code such as DE' })
  country?: string;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(100)
  risk_score?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  attestation_count?: number;

  @IsOptional()
  @IsBoolean()
  jailbreak_detected?: boolean;

  @IsOptional()
  @IsString()
  @MaxLength(50)
  device_integrity?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  first_seen_days?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  suspicious_events?: number;

  @IsOptional()
  @IsAdditionalData()
  additional_data?: Record<string, string>;
}

/**
 * Preview body: the device context itself. The same fields are also accepted nested under
 * `device_context` (which wins where both are given), for clients that keep the context apart.
 */
export class ConsolePreviewClaimDto extends ConsoleDeviceContextDto {
  @IsOptional()
  @ValidateNested()
  @Type(() => ConsoleDeviceContextDto)
  device_context?: ConsoleDeviceContextDto;
}

export class ConsoleTestClaimDto extends ConsolePreviewClaimDto {
  @IsDefined()
  @ValidateNested()
  @Type(() => ConsoleTestClaimDefinitionDto)
  claim!: ConsoleTestClaimDefinitionDto;
}

export class ConsoleReorderClaimsDto {
  @IsArray()
  @ArrayMaxSize(MAX_REORDER_IDS)
  @IsString({ each: true })
  @MaxLength(MAX_CLAIM_KEY_LENGTH, { each: true })
  claim_ids!: string[];
}

function configurationOf(dto: ConsoleConfigurationFields): ClaimConfiguration {
  return {
    staticValue: dto.static_value,
    conditionalRules: dto.conditional_rules,
    dynamicExpression: dto.dynamic_expression,
    externalConfig: dto.external_config,
    validationRules: dto.validation_rules,
  };
}

/** Drops absent members, so "not given" stays distinguishable from an explicit null. */
function given<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}

export function fromConsoleCreate(dto: ConsoleCreateClaimDto): ClaimInput {
  return given({
    claimKey: dto.claim_key,
    claimName: dto.claim_name,
    claimType: dto.claim_type,
    dataType: dto.data_type,
    description: dto.description,
    priority: dto.priority,
    isActive: dto.is_active,
    ...configurationOf(dto),
  });
}

export function fromConsoleUpdate(dto: ConsoleUpdateClaimDto): ClaimPatch {
  return given({
    claimKey: dto.claim_key,
    claimName: dto.claim_name,
    claimType: dto.claim_type,
    dataType: dto.data_type,
    description: dto.description,
    priority: dto.priority,
    isActive: dto.is_active,
    ...configurationOf(dto),
  });
}

export function fromConsoleTestDefinition(dto: ConsoleTestClaimDefinitionDto): ClaimTestInput {
  return given({
    claimKey: dto.claim_key,
    claimName: dto.claim_name,
    claimType: dto.claim_type,
    dataType: dto.data_type,
    ...configurationOf(dto),
  });
}

function profileOf(dto: ConsoleDeviceContextDto): DeviceProfileInput {
  return given({
    keyId: dto.key_id,
    deviceModel: dto.device_model,
    osVersion: dto.os_version,
    appVersion: dto.app_version,
    country: dto.country,
    riskScore: dto.risk_score,
    attestationCount: dto.attestation_count,
    jailbreakDetected: dto.jailbreak_detected,
    deviceIntegrity: dto.device_integrity,
    firstSeenDays: dto.first_seen_days,
    suspiciousEvents: dto.suspicious_events,
  });
}

export function consoleDeviceOf(dto: ConsolePreviewClaimDto): {
  profile: DeviceProfileInput;
  additionalData?: Record<string, string>;
} {
  const nested = dto.device_context;
  return {
    profile: { ...profileOf(dto), ...(nested ? profileOf(nested) : {}) },
    additionalData: nested?.additional_data ?? dto.additional_data,
  };
}
