import { HttpStatus } from '@nestjs/common';
import { AppException } from '../common/errors/app-exception.js';

export const noBillingAccount = () =>
  new AppException(HttpStatus.PAYMENT_REQUIRED, 'payment_required', 'This organization has no billing account yet', {
    hint: 'Upgrade to a paid plan first',
  });
