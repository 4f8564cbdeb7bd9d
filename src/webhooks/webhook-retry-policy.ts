/** A delivery gets at most this many attempts per budget; a manual retry grants a new budget. */
export const MAX_ATTEMPTS = 3;

export interface RetrySchedule {
  /** Delay after the first failed attempt. */
  baseDelayMs: number;
  /** Each later delay is this many times the previous one. */
  factor: number;
}

/** 10 s after the first failure, 60 s after the second: exponential, and lower bounds only. */
export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = { baseDelayMs: 10_000, factor: 6 };

export type AttemptOutcome = { status: 'succeeded' } | { status: 'failed' } | { status: 'pending'; retryInMs: number };

/** What follows attempt number `attempt` (1-based within the budget). Pure. */
export function afterAttempt(attempt: number, succeeded: boolean, schedule: RetrySchedule): AttemptOutcome {
  if (succeeded) return { status: 'succeeded' };
  if (attempt >= MAX_ATTEMPTS) return { status: 'failed' };
  return { status: 'pending', retryInMs: schedule.baseDelayMs * schedule.factor ** (attempt - 1) };
}

/** 2xx is success; anything else, or no answer, is a failure. */
export function isSuccessStatus(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode < 300;
}
