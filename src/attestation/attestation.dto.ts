import {
  IsBase64,
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import {
  AppVersionField,
  CountryField,
  DeviceModelField,
  OsVersionField,
} from '../common/validation/device-attributes.js';

export class DeviceProfileFields {
  @IsOptional()
  @IsString()
  @MaxLength(200)
  deviceId?: string;

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
  @MaxLength(200)
  subjectId?: string;

  /** HMAC-SHA256 by the tenant's backend over the canonical subject string (docs/security.md). */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  subjectSignature?: string;

  /** Epoch seconds after which `subjectSignature` is no longer accepted. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(99_999_999_999)
  subjectExpiresAt?: number;
}

export class ValidateAttestationDto extends DeviceProfileFields {
  @IsString()
  @Length(1, 100)
  @IsBase64({}, { message: 'keyId must be base64' })
  keyId!: string;

  @IsString()
  @Length(1, 200_000)
  @IsBase64({}, { message: 'attestationObject must be base64' })
  attestationObject!: string;

  @IsString()
  @Length(1, 200)
  challenge!: string;

  @IsOptional()
  @IsBoolean()
  jailbreakDetected?: boolean;
}

export class RefreshAttestationDto extends DeviceProfileFields {
  @IsString()
  @Length(1, 100)
  @IsBase64({}, { message: 'keyId must be base64' })
  keyId!: string;

  @IsString()
  @Length(1, 20_000)
  @IsBase64({}, { message: 'assertion must be base64' })
  assertion!: string;

  @IsString()
  @Length(1, 200)
  challenge!: string;

  @IsOptional()
  @IsString()
  @Length(1, 20_000)
  @IsBase64({}, { message: 'clientData must be base64' })
  clientData?: string;

  /** A 5-minute token marked `limited_use`, for one backend call that consumes it. */
  @IsOptional()
  @IsBoolean()
  limitedUse?: boolean;
}

/** Android validation and re-attestation: a fresh Play Integrity token bound to the challenge. */
export class ValidateAndroidDto extends DeviceProfileFields {
  /** The token Play Integrity returned (a compact JWE), requested with the challenge's request hash. */
  @IsString()
  @Length(1, 16_384)
  integrityToken!: string;

  @IsString()
  @Length(1, 200)
  challenge!: string;

  /** The SDK's random id of this installation (kept across launches); the device is keyed by it and the app. */
  @IsString()
  @Length(16, 200)
  @Matches(/^[A-Za-z0-9._:+/=-]+$/, { message: 'installationId must be printable ASCII without spaces' })
  installationId!: string;

  @IsOptional()
  @IsBoolean()
  jailbreakDetected?: boolean;
}
