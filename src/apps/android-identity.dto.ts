import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsString,
  Length,
  Matches,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { DEVICE_VERDICTS, type DeviceVerdict } from '../common/android-device-verdicts.js';

const IsOmittable = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** Android application ids: at least two dot-separated segments, each starting with a letter. */
export const PACKAGE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;

export class AndroidPolicyDto {
  /** A device passes when Play lists at least one of these labels for it. */
  @IsOmittable()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(3)
  @ArrayUnique()
  @IsIn(DEVICE_VERDICTS, {
    each: true,
    message: `acceptedDeviceVerdicts: each must be one of ${DEVICE_VERDICTS.join(', ')}`,
  })
  acceptedDeviceVerdicts?: DeviceVerdict[];

  @IsOmittable()
  @IsBoolean()
  refuseUnrecognizedVersion?: boolean;

  @IsOmittable()
  @IsBoolean()
  refuseUnlicensed?: boolean;

  @IsOmittable()
  @IsBoolean()
  basicIntegrityAsRooted?: boolean;

  @IsOmittable()
  @IsBoolean()
  notFromPlayAsDevelopment?: boolean;
}

/**
 * An app's Android identity as a developer pastes it from Play Console. The keys are required
 * the first time and may be left out later to keep the stored ones.
 */
export class PutAndroidIdentityDto {
  @IsString()
  @Length(3, 150)
  @Matches(PACKAGE_NAME_PATTERN, { message: 'packageName must be an Android application id such as com.example.app' })
  packageName!: string;

  /** SHA-256 fingerprints of the signing certificates: hex (colons optional) or base64. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(16)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  certificateSha256Digests!: string[];

  /** Play Console's response decryption key: base64 of 32 bytes (AES-256). */
  @IsOmittable()
  @IsString()
  @Length(1, 100)
  decryptionKey?: string;

  /** Play Console's response verification key: base64 DER SubjectPublicKeyInfo of an EC P-256 key. */
  @IsOmittable()
  @IsString()
  @Length(1, 500)
  verificationKey?: string;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => AndroidPolicyDto)
  policy?: AndroidPolicyDto;
}
