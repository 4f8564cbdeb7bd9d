import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import { WEBHOOK_EVENTS } from './webhook-event-catalog.js';

export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;

const ACCEPTED_EVENTS = `events may only contain ${WEBHOOK_EVENTS.join(', ')}`;
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** Listing an event twice subscribes once. */
const unique = ({ value }: { value: unknown }) => (Array.isArray(value) ? [...new Set(value)] : value);

export class CreateWebhookDto {
  /** HTTPS (or http with WEBHOOK_ALLOW_PRIVATE_NETWORKS); the service checks scheme and address. */
  @Transform(trim)
  @IsString({ message: 'url must be a string' })
  @MaxLength(MAX_URL_LENGTH)
  url!: string;

  @Transform(unique)
  @IsArray({ message: 'events must be an array of event names' })
  @ArrayMinSize(1, { message: `events must list at least one event: ${WEBHOOK_EVENTS.join(', ')}` })
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @IsIn(WEBHOOK_EVENTS, { each: true, message: ACCEPTED_EVENTS })
  events!: string[];

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string;
}

/** Only these three may change; the URL and the secret are fixed at creation. */
export class UpdateWebhookDto {
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;

  @IsOptional()
  @Transform(unique)
  @IsArray({ message: 'events must be an array of event names' })
  @ArrayMinSize(1, { message: `events must list at least one event: ${WEBHOOK_EVENTS.join(', ')}` })
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @IsIn(WEBHOOK_EVENTS, { each: true, message: ACCEPTED_EVENTS })
  events?: string[];

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string;
}

/** `GET /org/webhooks/:id/deliveries`: `page` and `per` (default 20, at most 100), newest first. */
export class DeliveriesQuery extends PageQuery {}
