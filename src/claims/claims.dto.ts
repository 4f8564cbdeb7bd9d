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
  IsUUID,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import {
  AppVersionField,
  CountryField,
  DeviceModelField,
  OsVersionField,
} from '../common/validation/device-attributes.js';
import { CLAIM_DATA_TYPES, CLAIM_TYPES, type ClaimDataType, type ClaimType } from './engine/index.js';
import { ValidationFailedException, type FieldError } from '../common/errors/app-exception.js';
import { createValidationPipe } from '../common/validation/validation.js';
import { MAX_CLAIM_NAME_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_PRIORITY } from './claim-input.js';
import { invalidClaim } from './claims.exceptions.js';
import { IsAdditionalData, IsClaimKey } from './claim-validators.js';

export const MAX_BULK_CLAIMS = 100;
export const MAX_REORDER_IDS = 1000;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/*
 * The claim request bodies of both surfaces: the session surface takes these classes, the console
 * surface the same classes in snake_case (console-claims.dto.ts), so each rule is written once.
 */

/**
 * The type-specific fields and validation rules, top-level in requests. Their inner shape is
 * checked by the claim engine, which names the failing path (`conditionalRules[0].value`).
 */
class ClaimConfigurationFields {
  @IsOptional()
  @IsString()
  staticValue?: string | null;

  @IsOptional()
  @IsArray()
  conditionalRules?: unknown[] | null;

  @IsOptional()
  @IsString()
  dynamicExpression?: string | null;

  @IsOptional()
  @IsObject()
  externalConfig?: Record<string, unknown> | null;

  @IsOptional()
  @IsObject()
  validationRules?: Record<string, unknown> | null;
}

export class CreateClaimDto extends ClaimConfigurationFields {
  @IsClaimKey()
  claimKey!: string;

  @Transform(trim)
  @IsString()
  @Length(1, MAX_CLAIM_NAME_LENGTH)
  claimName!: string;

  @IsIn(CLAIM_TYPES)
  claimType!: ClaimType;

  @IsIn(CLAIM_DATA_TYPES)
  dataType!: ClaimDataType;

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
  isActive?: boolean;
}

/** Any subset; `claimKey` and `claimType` are accepted only unchanged. */
export class UpdateClaimDto extends ClaimConfigurationFields {
  @IsOptional()
  @IsString()
  claimKey?: string;

  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, MAX_CLAIM_NAME_LENGTH)
  claimName?: string;

  @IsOptional()
  @IsIn(CLAIM_TYPES)
  claimType?: ClaimType;

  @IsOptional()
  @IsIn(CLAIM_DATA_TYPES)
  dataType?: ClaimDataType;

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
  isActive?: boolean;
}

/** An unsaved claim to test: the create fields, with key and name optional. */
export class TestClaimDefinitionDto extends ClaimConfigurationFields {
  @IsOptional()
  @IsClaimKey()
  claimKey?: string;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_CLAIM_NAME_LENGTH)
  claimName?: string;

  @IsIn(CLAIM_TYPES)
  claimType!: ClaimType;

  @IsIn(CLAIM_DATA_TYPES)
  dataType!: ClaimDataType;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string | null;

  @IsOptional()
  @IsInt()
  priority?: number;

  @IsOptional()
  @IsBoolean()
  isActive?: boolean;
}

/**
 * The device a test or preview evaluates against; the four core fields are required (on the
 * console, where the context is the body itself, every field is optional).
 */
export class DeviceProfileDto {
  @IsString()
  @Length(1, 200)
  keyId!: string;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(100)
  riskScore!: number;

  @IsInt()
  @Min(0)
  attestationCount!: number;

  @IsBoolean()
  jailbreakDetected!: boolean;

  @DeviceModelField()
  deviceModel?: string;

  @OsVersionField()
  osVersion?: string;

  @AppVersionField()
  appVersion?: string;

  @CountryField()
  country?: string;

  @IsOptional()
  @IsString()
  @MaxLength(50)
  deviceIntegrity?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  firstSeenDays?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  suspiciousEvents?: number;
}

export class TestContextDto {
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => DeviceProfileDto)
  deviceProfile?: DeviceProfileDto;

  @IsOptional()
  @IsAdditionalData()
  additionalData?: Record<string, string>;
}

export class TestClaimDto {
  @IsDefined()
  @ValidateNested()
  @Type(() => TestClaimDefinitionDto)
  claimConfiguration!: TestClaimDefinitionDto;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => TestContextDto)
  testContext?: TestContextDto;
}

export class PreviewClaimDto {
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => TestContextDto)
  testContext?: TestContextDto;
}

export class ReorderClaimsDto {
  @IsArray()
  @ArrayMaxSize(MAX_REORDER_IDS)
  @IsUUID('all', { each: true, message: 'claimIds must hold claim UUIDs' })
  claimIds!: string[];
}

/**
 * The bulk body: a JSON array of create requests, each validated like a single create. Fields
 * are named by index (`[2].claimKey`). The global pipe cannot do this for a top-level array.
 */
export async function parseBulkClaims(body: unknown): Promise<CreateClaimDto[]> {
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_BULK_CLAIMS) {
    throw invalidClaim([{ field: 'body', message: `must be a JSON array of 1 to ${MAX_BULK_CLAIMS} claims` }]);
  }
  const pipe = createValidationPipe();
  const problems: FieldError[] = [];
  const claims: CreateClaimDto[] = [];
  for (const [index, item] of body.entries()) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push({ field: `[${index}]`, message: 'must be a claim object' });
      continue;
    }
    try {
      claims.push((await pipe.transform(item, { type: 'body', metatype: CreateClaimDto })) as CreateClaimDto);
    } catch (error) {
      if (!(error instanceof ValidationFailedException)) throw error;
      problems.push(...error.fieldErrors.map(({ field, message }) => ({ field: `[${index}].${field}`, message })));
    }
  }
  if (problems.length > 0) throw invalidClaim(problems);
  return claims;
}
