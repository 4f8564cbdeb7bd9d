import { describe, expect, it } from '@jest/globals';
import {
  PASSWORD_SIGN_IN,
  admission,
  mergeSignIn,
  shownOrganizations,
  signInOf,
  speaksForAccount,
  ssoSignIn,
} from './session-admission.js';

const X = 'org-x';
const Y = 'org-y';
const entry = (
  organizationId: string,
  overrides: { member?: boolean; isSuperAdmin?: boolean; ssoEnforced?: boolean } = {},
) => ({
  organizationId,
  member: true,
  isSuperAdmin: false,
  ssoEnforced: false,
  ...overrides,
});

describe('which organizations a session may act in', () => {
  it('confines a session made by an organization’s provider to that organization', () => {
    expect(admission(ssoSignIn(X), entry(X))).toEqual({ admitted: true });
    expect(admission(ssoSignIn(X), entry(Y))).toEqual({ admitted: false, reason: 'sign_in_required' });
    expect(admission(ssoSignIn(X), entry(Y, { ssoEnforced: true }))).toEqual({
      admitted: false,
      reason: 'sso_required',
    });
  });

  it('lets a password session act everywhere except where SSO is enforced on the user', () => {
    expect(admission(PASSWORD_SIGN_IN, entry(Y))).toEqual({ admitted: true });
    expect(admission(PASSWORD_SIGN_IN, entry(X, { ssoEnforced: true }))).toEqual({
      admitted: false,
      reason: 'sso_required',
    });
  });

  it('needs a membership, except for super admins signed in with a password', () => {
    expect(admission(PASSWORD_SIGN_IN, entry(Y, { member: false }))).toEqual({ admitted: false, reason: 'not_member' });
    expect(admission(ssoSignIn(Y), entry(Y, { member: false }))).toEqual({ admitted: false, reason: 'not_member' });
    expect(admission(PASSWORD_SIGN_IN, entry(Y, { member: false, isSuperAdmin: true }))).toEqual({ admitted: true });
  });

  it('keeps a session made before sign-ins were recorded in its organization only', () => {
    const legacy = signInOf({ organizationId: X });
    expect(admission(legacy, entry(X))).toEqual({ admitted: true });
    expect(admission(legacy, entry(Y)).admitted).toBe(false);
    expect(signInOf({ organizationId: null })).toEqual({ password: false, ssoOrganizationIds: [] });
  });

  it('adds a second sign-in of the same user to the first', () => {
    const both = mergeSignIn(ssoSignIn(X), PASSWORD_SIGN_IN);
    expect(admission(both, entry(X, { ssoEnforced: true }))).toEqual({ admitted: true });
    expect(admission(both, entry(Y))).toEqual({ admitted: true });
    expect(mergeSignIn(undefined, ssoSignIn(Y))).toEqual(ssoSignIn(Y));
  });

  it('lets only a sign-in that vouches for every organization of the account act on the account itself', () => {
    expect(speaksForAccount(PASSWORD_SIGN_IN, [X, Y])).toBe(true);
    expect(speaksForAccount(ssoSignIn(X), [X])).toBe(true);
    expect(speaksForAccount(ssoSignIn(X), [X, Y])).toBe(false);
    expect(speaksForAccount(mergeSignIn(ssoSignIn(X), ssoSignIn(Y)), [X, Y])).toBe(true);
    expect(speaksForAccount(signInOf({ organizationId: X }), [X, Y])).toBe(false);
  });

  it('shows a session made by an organization’s provider that organization only, and a password session every one', () => {
    const account = [{ id: X }, { id: Y }];
    expect(shownOrganizations(ssoSignIn(X), account)).toEqual([{ id: X }]);
    expect(shownOrganizations(signInOf({ organizationId: Y }), account)).toEqual([{ id: Y }]);
    expect(shownOrganizations(PASSWORD_SIGN_IN, account)).toEqual(account);
    expect(shownOrganizations({ password: false, ssoOrganizationIds: [X, Y] }, account)).toEqual(account);
    expect(shownOrganizations(mergeSignIn(ssoSignIn(X), PASSWORD_SIGN_IN), account)).toEqual(account);
  });
});
