/** Every way an App Attest attestation or assertion can be refused; each code names the failed step. */
export const APP_ATTEST_ERROR_CODES = [
  'invalid_cbor',
  'invalid_format',
  'certificate_chain_invalid',
  'nonce_mismatch',
  'key_id_mismatch',
  'rp_id_mismatch',
  'counter_not_zero',
  'aaguid_invalid',
  'credential_id_mismatch',
  'invalid_assertion',
  'signature_invalid',
  'counter_not_increasing',
] as const;

export type AppAttestErrorCode = (typeof APP_ATTEST_ERROR_CODES)[number];

export interface AppAttestFailure {
  ok: false;
  code: AppAttestErrorCode;
  message: string;
}

/**
 * Thrown by the verification steps and turned into an {@link AppAttestFailure} at the public
 * entry points, so each step stays a small function that returns only its happy-path value.
 */
export class AppAttestError extends Error {
  constructor(
    readonly code: AppAttestErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AppAttestError';
  }
}

export function fail(code: AppAttestErrorCode, message: string): never {
  throw new AppAttestError(code, message);
}

/**
 * Runs one verification step and turns anything it throws that is not already a refusal (a
 * certificate whose key does not decode, an EC point OpenSSL rejects, a malformed DER length)
 * into that step's refusal, so attacker-chosen bytes always end as the step's domain code.
 */
export function during<T>(code: AppAttestErrorCode, what: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    return refuseAs(code, what, error);
  }
}

/** `during` for a step that answers a promise (a signature verified on the thread pool). */
export async function duringAsync<T>(code: AppAttestErrorCode, what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    return refuseAs(code, what, error);
  }
}

function refuseAs(code: AppAttestErrorCode, what: string, error: unknown): never {
  if (error instanceof AppAttestError) throw error;
  return fail(code, `${what}: ${error instanceof Error ? error.message : String(error)}`);
}

/**
 * Runs a verification (its signatures checked on the thread pool) and reports a refused step as a
 * value; any other exception is a bug and propagates.
 */
export async function refusalAsResultAsync<T>(verify: () => Promise<T>): Promise<T | AppAttestFailure> {
  try {
    return await verify();
  } catch (error) {
    if (error instanceof AppAttestError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}
