import { Transform, Type } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { PutAndroidIdentityDto } from './android-identity.dto.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/**
 * Optional but not nullable: `@IsOptional()` also skips validation for `null`, which would store
 * null in NOT NULL columns (a 500) or in thresholds the attestation path compares against.
 * Only the fields the interface document marks nullable keep `@IsOptional()`.
 */
const IsOmittable = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** Reverse-DNS: at least two dot-separated labels of letters, digits and hyphens. */
export const BUNDLE_ID_PATTERN = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
/** Apple developer team identifiers: ten upper-case letters or digits. */
export const TEAM_ID_PATTERN = /^[A-Z0-9]{10}$/;

export class JwtConfigurationDto {
  @IsOptional()
  @IsInt()
  @Min(60)
  @Max(2_592_000)
  overrideExpirationTime?: number | null;

  @IsOmittable()
  @IsBoolean()
  includeAppMetadata?: boolean;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  customAudience?: string | null;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  @IsUrl({ require_tld: false, require_protocol: true }, { message: 'customIssuer must be a URL' })
  customIssuer?: string | null;
}

export class RiskThresholdsDto {
  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(100)
  maxAllowedRiskScore?: number;

  @IsOmittable()
  @IsBoolean()
  blockOnJailbreak?: boolean;

  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  minAttestationCount?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(36_500)
  maxDeviceAge?: number | null;

  @IsOmittable()
  @IsBoolean()
  requireAppStoreReceipt?: boolean;
}

/** Both halves of the iOS identity or neither: the half given names the one missing. */
const SentWith = (partner: 'bundleId' | 'teamId') =>
  ValidateBy({
    name: 'sentWith',
    validator: {
      validate: (_value: unknown, args) => (args?.object as UpdateAppDto)[partner] !== undefined,
      defaultMessage: (args) => `${args?.property} must be sent with ${partner} (together they set the iOS identity)`,
    },
  });

export class UpdateAppDto {
  @IsOmittable()
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  appName?: string;

  /**
   * With teamId: gives an Android-only app its iOS identity, once. An app's Bundle ID and Team ID
   * are immutable once set (409 for other values; the same values change nothing).
   */
  @IsOmittable()
  @Transform(trim)
  @IsString()
  @MaxLength(155)
  @Matches(BUNDLE_ID_PATTERN, { message: 'bundleId must be a reverse-DNS identifier such as com.example.app' })
  @SentWith('teamId')
  bundleId?: string;

  /** With bundleId (see there). */
  @IsOmittable()
  @Transform(trim)
  @IsString()
  @Matches(TEAM_ID_PATTERN, { message: 'teamId must be a 10-character Apple team identifier such as A1B2C3D4E5' })
  @SentWith('bundleId')
  teamId?: string;

  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => JwtConfigurationDto)
  jwtConfiguration?: JwtConfigurationDto;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => RiskThresholdsDto)
  riskThresholds?: RiskThresholdsDto;

  @IsOmittable()
  @IsBoolean()
  analyticsEnabled?: boolean;

  @IsOmittable()
  @IsBoolean()
  webhookEnabled?: boolean;

  /** Needs a subject signing secret (POST /api/v1/apps/:appID/subject-signing-secret) first. */
  @IsOmittable()
  @IsBoolean()
  requireSignedSubject?: boolean;

  @IsOmittable()
  @IsBoolean()
  debugTokensEnabled?: boolean;
}

/**
 * The iOS identity is checked when either half is given, or when no Android identity is: an app
 * has Bundle ID and Team ID together, an Android identity, or both.
 */
const IosIdentityRequired = () =>
  ValidateIf(
    (object: CreateAppDto, value: unknown) =>
      value !== undefined ||
      object.android === undefined ||
      object.bundleId !== undefined ||
      object.teamId !== undefined,
  );

export class CreateAppDto {
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  appName!: string;

  /** Required with teamId, unless `android` is given (an Android-only app). */
  @IosIdentityRequired()
  @Transform(trim)
  @IsString()
  @MaxLength(155)
  @Matches(BUNDLE_ID_PATTERN, { message: 'bundleId must be a reverse-DNS identifier such as com.example.app' })
  bundleId?: string;

  /** Required with bundleId, unless `android` is given (an Android-only app). */
  @IosIdentityRequired()
  @Transform(trim)
  @IsString()
  @Matches(TEAM_ID_PATTERN, { message: 'teamId must be a 10-character Apple team identifier such as A1B2C3D4E5' })
  teamId?: string;

  /**
   * The app's Android identity, as PUT /api/v1/apps/:appID/android takes it (both keys required):
   * beside the iOS identity, or instead of it. Stored with the app, or neither is.
   */
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => PutAndroidIdentityDto)
  android?: PutAndroidIdentityDto;

  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @IsOmittable()
  @IsBoolean()
  isPrimary?: boolean;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => JwtConfigurationDto)
  jwtConfiguration?: JwtConfigurationDto;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => RiskThresholdsDto)
  riskThresholds?: RiskThresholdsDto;
}

export class AppUsageQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(365)
  days?: number;
}
