/**
 * How an organization proves an SSO domain: a TXT record at `_attestly-challenge.<domain>` whose
 * value is `attestly-domain-verification=<the organization's token>`. Pure, so the rules are
 * unit-tested without DNS.
 */
export const CHALLENGE_LABEL = '_attestly-challenge';
const VALUE_PREFIX = 'attestly-domain-verification=';

export function challengeName(domain: string): string {
  return `${CHALLENGE_LABEL}.${domain}`;
}

export function challengeValue(token: string): string {
  return `${VALUE_PREFIX}${token}`;
}

/** What a lookup of the challenge name found: TXT strings, a definite "no such record", or no answer. */
export type TxtLookup =
  | { readonly kind: 'records'; readonly values: readonly string[] }
  | { readonly kind: 'absent' }
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * The verdict on a domain from one lookup: `proven` (the token is published), `missing` (the name
 * answered without it, or does not exist: a held domain becomes inert), or `unknown` (no answer:
 * a held domain keeps its state until an answer comes).
 */
export type ChallengeVerdict =
  | { readonly kind: 'proven' }
  | { readonly kind: 'missing'; readonly reason: string }
  | { readonly kind: 'unknown'; readonly reason: string };

export function challengeVerdict(lookup: TxtLookup, token: string): ChallengeVerdict {
  switch (lookup.kind) {
    case 'records':
      return lookup.values.some((value) => value.trim() === challengeValue(token))
        ? { kind: 'proven' }
        : { kind: 'missing', reason: 'the TXT record does not carry this organization’s token' };
    case 'absent':
      return { kind: 'missing', reason: 'no TXT record was found' };
    case 'failed':
      return { kind: 'unknown', reason: lookup.reason };
  }
}
