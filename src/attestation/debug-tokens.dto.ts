import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsDate, IsOptional, IsString, Length, Matches, MaxDate, MaxLength, MinDate } from 'class-validator';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** A debug token lives at most this long; without `expiresAt` it lives until revoked. */
export const MAX_DEBUG_TOKEN_DAYS = 366;

export class CreateDebugTokenDto {
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  name!: string;

  @IsOptional()
  @Type(() => Date)
  @IsDate({ message: 'expiresAt must be an ISO 8601 timestamp' })
  @MinDate(() => new Date(), { message: 'expiresAt must be in the future' })
  @MaxDate(() => new Date(Date.now() + MAX_DEBUG_TOKEN_DAYS * 86_400_000), {
    message: `expiresAt must be within ${MAX_DEBUG_TOKEN_DAYS} days`,
  })
  expiresAt?: Date;
}

/** What a Simulator or CI build sends instead of an App Attest attestation. */
export class DebugAttestationDto {
  @IsString()
  @Length(1, 100)
  @Matches(/^dbg_[A-Za-z0-9_-]+$/, { message: 'debugToken must be a debug token (dbg_…)' })
  debugToken!: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  deviceId?: string;

  @IsOptional()
  @IsBoolean()
  limitedUse?: boolean;
}
