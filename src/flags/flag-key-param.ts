import { Param, type PipeTransform } from '@nestjs/common';
import { invalidField } from '../common/errors/app-exception.js';

/** What a flag key may hold (the create DTO's rule), or a flag UUID. */
export const FLAG_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,99}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

class FlagKeyPipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    if (typeof value !== 'string' || !(FLAG_KEY_PATTERN.test(value) || isUuid(value))) {
      throw invalidField('flagKey', "must be a flag key of this app or the flag's UUID");
    }
    return value;
  }
}

/** The `:flagKey` path parameter: a flag's key within the app of the path, or its id. */
export const FlagKeyParam = () => Param('flagKey', new FlagKeyPipe());
