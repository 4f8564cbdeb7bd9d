import type { AppException } from '../../src/common/errors/app-exception.js';

/** The code of the AppException `promise` rejects with; fails the test when it fulfils. */
export async function refusalCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as AppException).code;
  }
  throw new Error('expected a refusal');
}
