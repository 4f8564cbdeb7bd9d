/** A failure the CLI reports as one line on stderr with a non-zero exit. */
export class CliError extends Error {}

/**
 * A failure that still has a result to print: the JSON object goes to stdout, the message to
 * stderr, and the exit code is non-zero (e.g. `attest:verify` of an invalid attestation).
 */
export class CliFailureWithOutput extends CliError {
  constructor(
    message: string,
    readonly output: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A command line the command does not take: exit 2 with the command's usage line on stderr. */
export class CliUsageError extends CliError {}
