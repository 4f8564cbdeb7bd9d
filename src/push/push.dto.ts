import { IsIn, IsString, Length, Matches, MaxLength } from 'class-validator';

export const APNS_ENVIRONMENTS = ['sandbox', 'production'] as const;
export type ApnsEnvironment = (typeof APNS_ENVIRONMENTS)[number];

/** Token-based APNs credentials: the key from Apple's developer account (a .p8 file). */
export class PutPushCredentialsDto {
  @IsString()
  @Matches(/^[A-Z0-9]{10}$/, { message: 'keyId must be the 10-character key identifier Apple shows' })
  keyId!: string;

  @IsString()
  @Matches(/^[A-Z0-9]{10}$/, { message: 'teamId must be a 10-character Apple team identifier' })
  teamId!: string;

  /** The contents of the .p8 file (PEM, PKCS #8, an EC P-256 key). */
  @IsString()
  @Length(100, 4_000)
  privateKey!: string;

  @IsIn(APNS_ENVIRONMENTS, { message: `environment must be one of: ${APNS_ENVIRONMENTS.join(', ')}` })
  environment!: ApnsEnvironment;
}

/** What the SDK registers: the APNs device token and the subscriber it stands for. */
export class RegisterPushTokenDto {
  /** The APNs device token as hex (what `deviceToken.map { String(format: "%02x", $0) }` gives). */
  @IsString()
  @Matches(/^[0-9a-fA-F]{64,200}$/, { message: 'pushToken must be the APNs device token in hex' })
  pushToken!: string;

  /** The id the app uses as `submitterId` / `voterId` in feedback and support. */
  @IsString()
  @Length(1, 200)
  @MaxLength(200)
  subscriberId!: string;
}
