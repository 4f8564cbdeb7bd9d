import { Param, ParseUUIDPipe } from '@nestjs/common';
import { invalidField } from '../errors/app-exception.js';

/** A path parameter that must be a UUID: 400 naming the parameter otherwise. */
export const UuidParam = (name: string) =>
  Param(name, new ParseUUIDPipe({ exceptionFactory: () => invalidField(name, 'must be a UUID') }));
