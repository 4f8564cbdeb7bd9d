import { HttpStatus } from '@nestjs/common';
import { AppException } from '../common/errors/app-exception.js';

/** Every seat is held by a member or a pending invite; the body says how many there are. */
export const seatsTaken = (limit: number, used: number) =>
  new AppException(HttpStatus.FORBIDDEN, 'forbidden', `All ${limit} seats of this plan are taken`, {
    hint: 'Revoke a pending invite, remove a member or upgrade the plan',
    body: { limit, current: used },
  });
