import { applyDecorators } from '@nestjs/common';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/**
 * The device attributes an SDK reports (attestation) and a claims test or preview simulates, each
 * validated alike wherever a body carries it: optional, bounded, the country as an ISO 3166-1
 * alpha-2 code. Field names stay the DTO's own, in its own order.
 */
export const DeviceModelField = () => applyDecorators(IsOptional(), IsString(), MaxLength(100));
export const OsVersionField = () => applyDecorators(IsOptional(), IsString(), MaxLength(50));
export const AppVersionField = () => applyDecorators(IsOptional(), IsString(), MaxLength(50));
export const CountryField = () =>
  applyDecorators(
    IsOptional(),
    Matches(/^[A-Za-z]{2}$/, { message: 'country must be an ISO 3166-1 alpha-2 code such as DE' }),
  );
