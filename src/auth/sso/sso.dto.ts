import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from 'class-validator';

export const SSO_ROLES = ['viewer', 'member', 'admin'] as const;
export type SsoRole = (typeof SSO_ROLES)[number];

export const MAX_ALLOWED_DOMAINS = 20;
/** A DNS name of at least two labels, lower case (the transform lowers it). */
export const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** Domains compare lower case; one listed twice counts once. */
const domains = ({ value }: { value: unknown }) =>
  Array.isArray(value)
    ? [...new Set(value.map((domain: unknown) => (typeof domain === 'string' ? domain.trim().toLowerCase() : domain)))]
    : value;

/** `PUT /api/v1/org/sso`: the whole connection; `clientSecret` may be left out to keep the stored one. */
export class PutSsoConnectionDto {
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  issuer!: string;

  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  clientId!: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  clientSecret?: string;

  @Transform(domains)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ALLOWED_DOMAINS)
  @IsString({ each: true })
  @MaxLength(253, { each: true })
  @Matches(DOMAIN, { each: true, message: 'each value in allowedDomains must be a domain name such as example.com' })
  allowedDomains!: string[];

  @IsIn(SSO_ROLES, { message: `defaultRole must be one of ${SSO_ROLES.join(', ')}` })
  defaultRole!: SsoRole;

  @IsBoolean()
  enforce!: boolean;
}

/** `POST /api/v1/auth/sso/discover`. */
export class SsoDiscoverDto {
  @Transform(trim)
  @IsEmail()
  @MaxLength(254)
  email!: string;
}
