import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsDate,
  IsIn,
  IsOptional,
  IsString,
  Length,
  MinDate,
} from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope } from '../common/access/access.decorator.js';
import { API_KEY_TYPES, type ApiKey, type ApiKeyType } from './api-key.entity.js';

export class CreateApiKeyDto {
  @IsString()
  @Length(1, 100)
  name!: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(API_KEY_SCOPES.length)
  @ArrayUnique()
  @IsIn(API_KEY_SCOPES, { each: true, message: `each value in scopes must be one of: ${API_KEY_SCOPES.join(', ')}` })
  scopes!: ApiKeyScope[];

  @IsOptional()
  @IsIn(API_KEY_TYPES, { message: `type must be one of: ${API_KEY_TYPES.join(', ')}` })
  type?: ApiKeyType;

  @IsOptional()
  @Type(() => Date)
  @IsDate({ message: 'expiresAt must be an ISO 8601 timestamp' })
  @MinDate(() => new Date(), { message: 'expiresAt must be in the future' })
  expiresAt?: Date;
}

/** An API key as listed: never the key itself. */
export interface ApiKeyResponse {
  id: string;
  name: string;
  type: ApiKey['keyType'];
  /** The first characters of the key, to recognize it; the key itself is shown once. */
  prefix: string;
  scopes: ApiKey['scopes'];
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}

export function toApiKeyResponse(key: ApiKey): ApiKeyResponse {
  return {
    id: key.id,
    name: key.name,
    type: key.keyType,
    prefix: key.prefix,
    scopes: key.scopes,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    expiresAt: key.expiresAt,
  };
}
