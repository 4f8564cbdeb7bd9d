import { AppException } from '../common/errors/app-exception.js';

export const webhookLimitReached = (maxWebhooks: number) =>
  new AppException(403, 'webhook_limit_reached', `Your plan allows ${maxWebhooks} webhook endpoints`, {
    hint: 'Delete an endpoint or upgrade the plan',
  });
