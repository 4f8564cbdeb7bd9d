import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  MAX_SUBJECT_SIGNATURE_LIFETIME_S,
  canonicalSubject,
  checkSubjectSignature,
  signSubject,
} from './subject-signature.js';
import { generateSubjectSecret } from '../apps/subject-secret.js';

const appId = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const now = 1_800_000_000;

describe('subject signatures', () => {
  const secret = generateSubjectSecret();
  const base = { secret, appId, subjectId: 'user-42', expiresAt: now + 600, now };

  it('is HMAC-SHA256 over the documented canonical string, base64url', () => {
    expect(canonicalSubject(appId, 'user-42', now + 600)).toBe(`attestly-subject-v1\n${appId}\nuser-42\n${now + 600}`);
    const expected = createHmac('sha256', secret)
      .update(`attestly-subject-v1\n${appId}\nuser-42\n${now + 600}`)
      .digest('base64url');
    expect(signSubject(secret, appId, 'user-42', now + 600)).toBe(expected);
  });

  it('accepts a signature by the app secret over this app, subject and expiry', () => {
    expect(checkSubjectSignature({ ...base, signature: signSubject(secret, appId, 'user-42', now + 600) })).toBe(
      'valid',
    );
  });

  it('refuses another subject, another app, another expiry, another secret or a missing part', () => {
    const signature = signSubject(secret, appId, 'user-42', now + 600);
    expect(checkSubjectSignature({ ...base, subjectId: 'user-43', signature })).toBe('invalid');
    expect(checkSubjectSignature({ ...base, appId: appId.replace('1b4e', '2b4e'), signature })).toBe('invalid');
    expect(checkSubjectSignature({ ...base, expiresAt: now + 601, signature })).toBe('invalid');
    expect(
      checkSubjectSignature({ ...base, signature: signSubject(generateSubjectSecret(), appId, 'user-42', now + 600) }),
    ).toBe('invalid');
    expect(checkSubjectSignature({ ...base, signature: `${signature}x` })).toBe('invalid');
    expect(checkSubjectSignature({ ...base, signature: undefined })).toBe('missing');
    expect(checkSubjectSignature({ ...base, expiresAt: undefined, signature })).toBe('missing');
  });

  it('refuses an expired signature and one valid for longer than 30 days', () => {
    const expired = signSubject(secret, appId, 'user-42', now);
    expect(checkSubjectSignature({ ...base, expiresAt: now, signature: expired })).toBe('expired');
    const far = now + MAX_SUBJECT_SIGNATURE_LIFETIME_S + 1;
    expect(
      checkSubjectSignature({ ...base, expiresAt: far, signature: signSubject(secret, appId, 'user-42', far) }),
    ).toBe('too_long');
  });
});
