import { AppException } from '../common/errors/app-exception.js';
import type { TierDefinition } from '../common/tiers.js';
import type { ChangeRequestState } from './change-request-state.js';

export const flagTypeUnavailable = (tier: TierDefinition) =>
  new AppException(403, 'flag_type_unavailable', `The ${tier.display} plan offers on/off (boolean) flags only`, {
    hint: 'Upgrade to Pro for integer, double, string and JSON flags',
  });

export const flagLimitReached = (tier: TierDefinition, limit: number) =>
  new AppException(
    403,
    'flag_limit_reached',
    `Your plan allows ${limit} flags ${tier.flagLimitScope === 'organization' ? 'per organization' : 'per app'}`,
    { hint: 'Upgrade the plan or delete a flag' },
  );

export const ruleLimitReached = (maxRules: number) =>
  new AppException(403, 'rule_limit_reached', `Your plan allows ${maxRules} rules per flag`, {
    hint: maxRules === 0 ? 'Targeting rules are available from the Pro plan' : 'Upgrade the plan for more rules',
  });

/** `problem` says what is wrong with the prerequisite graph (unknown flag, cycle, depth). */
export const invalidPrerequisites = (problem: string) =>
  new AppException(400, 'invalid_prerequisites', problem, {
    hint: 'Prerequisites name flags of the same app, without cycles, at most 5 deep',
  });

export const flagHasDependents = (flagKey: string, dependents: readonly string[]) =>
  new AppException(
    409,
    'flag_has_dependents',
    `Other flags name ${flagKey} as a prerequisite: ${dependents.join(', ')}`,
    { hint: 'Remove the prerequisite from those flags first', body: { dependents } },
  );

export const scheduleLimitReached = (max: number) =>
  new AppException(409, 'schedule_limit_reached', `A flag holds at most ${max} pending schedules`, {
    hint: 'Cancel a pending schedule first',
  });

export const selfApproval = () =>
  new AppException(403, 'self_approval', 'The author of a change request cannot approve or reject it', {
    hint: 'Another Admin decides',
  });

/**
 * A change request in a state the step does not take: stale (its flag changed since), or no longer
 * pending (to decide) or approved (to apply). Always 409 `change_request_stale`, as the README
 * promises, with the state in the message.
 */
export function changeRequestNotApplicable(state: ChangeRequestState): AppException {
  if (state === 'stale') {
    return new AppException(409, 'change_request_stale', 'The flag changed since this request was made', {
      hint: 'Make a new change request against the flag as it is now',
    });
  }
  return new AppException(409, 'change_request_stale', `The change request is ${state}`, {
    hint:
      state === 'pending'
        ? 'An Admin other than the author approves it first'
        : 'Make a new change request against the flag as it is now',
  });
}
