/**
 * A failure caused by a claim's definition or by its data source. The message is meant for
 * the claim's author: test results and previews show it as is.
 */
export class ClaimEvaluationError extends Error {
  override readonly name = 'ClaimEvaluationError';
}
