/** Exit codes of the command-line client (docs/operations.md). */
export const EXIT = {
  ok: 0,
  /** The service refused or failed the request, or could not be reached. */
  failed: 1,
  /** Unknown command, missing or invalid option. */
  usage: 2,
  /** No credentials, or the service answered 401 or 403. */
  auth: 3,
  /** `login` did not complete: denied, expired, timed out. */
  loginIncomplete: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure reported as a message (and in `--json` mode as an object) with its exit code. */
export class ClientError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

export class UsageError extends ClientError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** The service's error envelope: `error`, `code`, optional `hint` and `fields`, `requestId`. */
export class ApiError extends ClientError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint: string | undefined,
    readonly requestId: string | undefined,
    readonly fields: readonly { field: string; message: string }[] | undefined,
    /** Seconds from a 429's `Retry-After`. */
    readonly retryAfter?: number,
  ) {
    super(message, status === 401 || status === 403 ? EXIT.auth : EXIT.failed, {
      status,
      code,
      ...(hint ? { hint } : { ...defaultHint(status, retryAfter) }),
      ...(retryAfter !== undefined ? { retryAfter } : {}),
      ...(fields ? { fields } : {}),
      ...(requestId ? { requestId } : {}),
    });
    this.name = 'ApiError';
  }
}

/** What to do about a refusal the service gave no hint for. */
function defaultHint(status: number, retryAfter: number | undefined): { hint?: string } {
  if (status === 401) return { hint: 'Sign in with `attestly login`, or pass a valid key with --api-key' };
  if (status === 403) {
    return { hint: "The key's scopes or your role do not allow this; ask an Admin, or use a key with the scope" };
  }
  if (status === 429) {
    return {
      hint:
        retryAfter !== undefined
          ? `Too many requests: try again in ${retryAfter} s`
          : 'Too many requests: try again in a minute',
    };
  }
  return {};
}
