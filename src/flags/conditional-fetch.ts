import { hash } from 'node:crypto';

/**
 * Conditional fetches of GET /flags (RFC 9110, sections 8.8.3 and 13.1.2). The ETag is strong:
 * a digest of the exact bytes of the body, so two answers share a tag only when they are
 * byte-identical, whichever instance produced them.
 */
export function strongEtag(body: string): string {
  // 128 bits of SHA-256: collisions are not a practical concern, and the tag stays short.
  return `"${hash('sha256', body, 'base64url').slice(0, 22)}"`;
}

/**
 * Whether an `If-None-Match` header matches `etag`. If-None-Match compares weakly: `W/"x"` matches
 * `"x"`. `*` matches any current representation. A list is comma-separated.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  for (const candidate of header.split(',')) {
    let tag = candidate.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === etag) return true;
  }
  return false;
}
