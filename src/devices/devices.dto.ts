import { Transform, Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { PageQuery, PerPageQuery } from '../common/pagination.js';
import { DEVICE_PLATFORMS, type DevicePlatform } from './devices.repository.js';

export const EVENTS_DEFAULT_PER_PAGE = 50;

export const DEVICE_EVENT_TYPES = ['attestation', 'assertion', 'subject_changed'] as const;
export const DEVICE_EVENT_RESULTS = ['success', 'failure'] as const;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** `GET /api/v1/devices`: newest `lastSeenAt` first. */
export class ListDevicesQuery extends PageQuery {
  @IsOptional()
  @IsUUID('all', { message: 'appId must be a UUID' })
  appId?: string;

  /** Case-insensitive substring of the key id, the device model or the client's device id. */
  @IsOptional()
  @Transform(trim)
  @IsString()
  @MaxLength(200)
  search?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'minRisk must be an integer' })
  @Min(0, { message: 'minRisk must be from 0 to 100' })
  @Max(100, { message: 'minRisk must be from 0 to 100' })
  minRisk?: number;

  /** Only devices attested on this platform. */
  @IsOptional()
  @IsIn(DEVICE_PLATFORMS, { message: `platform must be one of ${DEVICE_PLATFORMS.join(', ')}` })
  platform?: DevicePlatform;
}

/** `GET /api/v1/analytics/devices/:keyId`: `appId` picks the app when one key id is known to several. */
export class DeviceDetailsQuery {
  @IsOptional()
  @IsUUID('all', { message: 'appId must be a UUID' })
  appId?: string;

  /** The window of `failuresByCode` and `dailyFailures` (default 30 days). */
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'days must be an integer' })
  @Min(1, { message: 'days must be 1 or more' })
  @Max(365, { message: 'days must be at most 365' })
  days?: number;
}

/** `GET /api/v1/analytics/events`: newest first; `from` and `to` are inclusive. */
export class ListEventsQuery extends PerPageQuery {
  override perPage = EVENTS_DEFAULT_PER_PAGE;

  @IsOptional()
  @IsUUID('all', { message: 'appId must be a UUID' })
  appId?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  keyId?: string;

  @IsOptional()
  @IsIn(DEVICE_EVENT_RESULTS, { message: `result must be one of ${DEVICE_EVENT_RESULTS.join(', ')}` })
  result?: (typeof DEVICE_EVENT_RESULTS)[number];

  @IsOptional()
  @IsIn(DEVICE_EVENT_TYPES, { message: `type must be one of ${DEVICE_EVENT_TYPES.join(', ')}` })
  type?: (typeof DEVICE_EVENT_TYPES)[number];

  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'from must be an ISO-8601 timestamp' })
  from?: string;

  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'to must be an ISO-8601 timestamp' })
  to?: string;
}

export class BlockDeviceDto {
  @IsOptional()
  @Transform(trim)
  @IsString()
  @MaxLength(500)
  reason?: string;
}
