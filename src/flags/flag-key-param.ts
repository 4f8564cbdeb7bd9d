import { Param, type PipeTransform } from '@nestjs/common';
import { invalidField } from '../common/errors/app-exception.js';
import { uuidPipe, type DeclaresUuidParams } from '../common/validation/uuid-param.js';

/** What a flag key may hold (the create DTO's rule), or a flag UUID. */
export const FLAG_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,99}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** How a dashboard route names its flag: by id (`/flags/:flagId`), or by key within an app (`/apps/:appId/flags/:flagKey`). */
export type FlagAddress = { readonly flagId: string } | { readonly appId: string; readonly flagKey: string };

/**
 * Reads the flag's address from the whole params object of a route served at both addresses:
 * `flagId` must be a UUID; `appId` must be a UUID and `flagKey` a flag key of that app or the
 * flag's UUID. Each refusal is a 400 naming the parameter, as `UuidParam` answers.
 */
export class FlagAddressPipe implements PipeTransform<unknown, Promise<FlagAddress>>, DeclaresUuidParams {
  readonly uuidParams = ['flagId', 'appId'] as const;

  async transform(value: unknown): Promise<FlagAddress> {
    const params = (value ?? {}) as Record<string, unknown>;
    if (params.flagId !== undefined) {
      return { flagId: await uuid('flagId', params.flagId) };
    }
    if (params.appId !== undefined && params.flagKey !== undefined) {
      const appId = await uuid('appId', params.appId);
      return { appId, flagKey: flagKey(params.flagKey) };
    }
    // A route declaring neither address: a mistake of the code, not of the request.
    throw new Error('FlagAddressPipe: the route has neither :flagId nor :appId and :flagKey');
  }
}

async function uuid(name: string, value: unknown): Promise<string> {
  return (await uuidPipe(name).transform(value, { type: 'param', data: name })) as string;
}

function flagKey(value: unknown): string {
  if (typeof value !== 'string' || !(FLAG_KEY_PATTERN.test(value) || isUuid(value))) {
    throw invalidField('flagKey', "must be a flag key of this app or the flag's UUID");
  }
  return value;
}

/** The flag a dashboard flag route names, by id or by key (`FlagAddress`); `FlagsService.idOf` finds its id. */
export const FlagAddressParam = () => Param(new FlagAddressPipe());
