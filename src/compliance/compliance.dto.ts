import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  Validate,
  ValidateIf,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { isVersion } from '../common/version.js';
import type { ComplianceSettingsInForce } from './compliance-settings.js';

export const VERSION_MAX = 64;
/** More than the 249 assigned ISO 3166-1 codes. */
export const COUNTRIES_MAX = 300;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** Codes compare upper case, as devices' countries are stored; a code listed twice counts once. */
const countryCodes = ({ value }: { value: unknown }) =>
  Array.isArray(value)
    ? [...new Set(value.map((code: unknown) => (typeof code === 'string' ? code.trim().toUpperCase() : code)))]
    : value;
/** For fields that may be left out but not set to null. */
const given = (_object: object, value: unknown) => value !== undefined;

@ValidatorConstraint({ name: 'isVersion' })
class IsVersionConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'string' && isVersion(value);
  }

  defaultMessage(): string {
    return '$property must be a version number such as 17, 16.4 or 2.1.3-beta, or null';
  }
}

/**
 * `PUT /api/v1/org/compliance`: any subset of the settings; fields left out keep their values, and
 * null clears a minimum version or the country list.
 */
export class UpdateComplianceDto {
  @ValidateIf(given)
  @IsInt({ message: 'maxRiskScore must be an integer from 0 to 100' })
  @Min(0, { message: 'maxRiskScore must be an integer from 0 to 100' })
  @Max(100, { message: 'maxRiskScore must be an integer from 0 to 100' })
  maxRiskScore?: number;

  @IsOptional()
  @Transform(trim)
  @IsString({ message: 'minOsVersion must be a version number or null' })
  @MaxLength(VERSION_MAX)
  @Validate(IsVersionConstraint)
  minOsVersion?: string | null;

  @IsOptional()
  @Transform(trim)
  @IsString({ message: 'minAppVersion must be a version number or null' })
  @MaxLength(VERSION_MAX)
  @Validate(IsVersionConstraint)
  minAppVersion?: string | null;

  @ValidateIf(given)
  @IsBoolean({ message: 'blockOnJailbreak must be a boolean' })
  blockOnJailbreak?: boolean;

  @IsOptional()
  @Transform(countryCodes)
  @IsArray({ message: 'allowedCountries must be a list of ISO 3166-1 alpha-2 codes, or null for every country' })
  @ArrayMinSize(1, { message: 'allowedCountries must list at least one country; null allows every country' })
  @ArrayMaxSize(COUNTRIES_MAX)
  @Matches(/^[A-Z]{2}$/, {
    each: true,
    message: 'allowedCountries must hold ISO 3166-1 alpha-2 codes such as US or DE',
  })
  allowedCountries?: string[] | null;
}

export interface ComplianceResponse {
  maxRiskScore: number;
  minOsVersion: string | null;
  minAppVersion: string | null;
  blockOnJailbreak: boolean;
  /** ISO country codes; null: every country. */
  allowedCountries: string[] | null;
  /** Null while the organization keeps the defaults. */
  updatedAt: Date | null;
}

export function toComplianceResponse(settings: ComplianceSettingsInForce): ComplianceResponse {
  return {
    maxRiskScore: settings.maxRiskScore,
    minOsVersion: settings.minOsVersion,
    minAppVersion: settings.minAppVersion,
    blockOnJailbreak: settings.blockOnJailbreak,
    allowedCountries: settings.allowedCountries,
    updatedAt: settings.updatedAt,
  };
}
