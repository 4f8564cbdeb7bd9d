import { IsBoolean, IsOptional, IsString, Length } from 'class-validator';

export class VerifyTokenDto {
  /** A device token minted by POST /api/v1/attestation/validate, refresh or debug. */
  @IsString()
  @Length(1, 16_384)
  token!: string;

  /** Marks the token used: a second consume (or any later verification) answers `already_used`. */
  @IsOptional()
  @IsBoolean()
  consume?: boolean;
}
