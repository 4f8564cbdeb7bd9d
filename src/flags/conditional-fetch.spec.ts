import { describe, expect, it } from '@jest/globals';
import { ifNoneMatchHits, strongEtag } from './conditional-fetch.js';

describe('conditional fetches', () => {
  it('tags a body by its bytes: equal bodies share a strong tag, any difference changes it', () => {
    const tag = strongEtag('{"flags":{"a":true}}');
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(strongEtag('{"flags":{"a":true}}')).toBe(tag);
    expect(strongEtag('{"flags":{"a":false}}')).not.toBe(tag);
    expect(strongEtag('{"flags":{"a":true} }')).not.toBe(tag);
  });

  it('matches If-None-Match weakly, in lists, and for *', () => {
    const tag = strongEtag('body');
    expect(ifNoneMatchHits(tag, tag)).toBe(true);
    expect(ifNoneMatchHits(`W/${tag}`, tag)).toBe(true);
    expect(ifNoneMatchHits(`"other", ${tag}`, tag)).toBe(true);
    expect(ifNoneMatchHits('*', tag)).toBe(true);
    expect(ifNoneMatchHits('"other"', tag)).toBe(false);
    expect(ifNoneMatchHits(tag.slice(1, -1), tag)).toBe(false);
    expect(ifNoneMatchHits(undefined, tag)).toBe(false);
    expect(ifNoneMatchHits('', tag)).toBe(false);
  });
});
