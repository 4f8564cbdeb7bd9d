export { validateClaimDefinition } from './claim-definition-validator.js';
export { evaluateClaim, evaluateClaims } from './claim-evaluator.js';
export * from './claim-types.js';
export { ExternalClaimFetcher } from './external-claim-fetcher.js';
