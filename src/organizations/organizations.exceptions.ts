import { AppException } from '../common/errors/app-exception.js';

/** The one refusal of a feature the organization's plan does not have: 403 `feature_unavailable`. */
export function featureUnavailable(message: string, hint?: string): AppException {
  return new AppException(403, 'feature_unavailable', message, hint === undefined ? undefined : { hint });
}
