/**
 * How a dashboard session was made, and the one rule deciding which organizations it may act in.
 * Pure: the session resolver (every request, so every route a session reaches: key minting, CLI
 * approval, the device-login page), switch-org, the choice of a fresh session's organization and
 * the organizations a session is shown (`shownOrganizations`) all ask `admission`.
 */
export interface SessionSignIn {
  /** Signed in with the account's own credentials: its password, or its e-mail confirmation link. */
  readonly password: boolean;
  /** The organizations whose identity provider signed this session in. */
  readonly ssoOrganizationIds: readonly string[];
}

/** What the rule needs to know about the organization the session would act in. */
export interface OrganizationEntry {
  readonly organizationId: string;
  /** The user is a member (super admins may act anywhere without being one). */
  readonly member: boolean;
  readonly isSuperAdmin: boolean;
  /** The organization enforces SSO on this user: a non-Owner member, connection enforcing, plan with SSO. */
  readonly ssoEnforced: boolean;
}

export type Admission =
  | { readonly admitted: true }
  | { readonly admitted: false; readonly reason: 'not_member' | 'sso_required' | 'sign_in_required' };

export const PASSWORD_SIGN_IN: SessionSignIn = { password: true, ssoOrganizationIds: [] };

export function ssoSignIn(organizationId: string): SessionSignIn {
  return { password: false, ssoOrganizationIds: [organizationId] };
}

/**
 * An organization's provider vouches for its own organization only: a session it made acts there
 * and nowhere else. A password session acts in every organization of the user except those that
 * enforce SSO on them. Anything else needs that organization's own sign-in.
 */
export function admission(signIn: SessionSignIn, entry: OrganizationEntry): Admission {
  if (!entry.member && !entry.isSuperAdmin) return { admitted: false, reason: 'not_member' };
  if (signIn.ssoOrganizationIds.includes(entry.organizationId) && entry.member) return { admitted: true };
  // Super admins sign in with a password only (SSO refuses them), and may act anywhere with it.
  if (signIn.password && (entry.isSuperAdmin || !entry.ssoEnforced)) return { admitted: true };
  return { admitted: false, reason: entry.ssoEnforced ? 'sso_required' : 'sign_in_required' };
}

/**
 * The sign-in record of a stored session. Sessions made before it was recorded do not say how they
 * were made, so they keep only the organization they were in.
 */
export function signInOf(session: { signIn?: SessionSignIn; organizationId?: string | null }): SessionSignIn {
  return (
    session.signIn ?? { password: false, ssoOrganizationIds: session.organizationId ? [session.organizationId] : [] }
  );
}

/** A new sign-in in a browser whose session already belonged to the same user adds to what it had. */
export function mergeSignIn(previous: SessionSignIn | undefined, next: SessionSignIn): SessionSignIn {
  if (!previous) return next;
  return {
    password: previous.password || next.password,
    ssoOrganizationIds: [...new Set([...previous.ssoOrganizationIds, ...next.ssoOrganizationIds])],
  };
}

/**
 * Whether a session speaks for the account itself (its address, leaving or deleting it), not only
 * for organizations: a sign-in with the account's own credentials does, and so does an SSO session
 * whose providers vouch for every organization the account belongs to. A provider that vouches for
 * one organization of an account that belongs to others too cannot reach those through the account.
 */
export function speaksForAccount(signIn: SessionSignIn, memberOrganizationIds: readonly string[]): boolean {
  if (signIn.password) return true;
  return memberOrganizationIds.every((id) => signIn.ssoOrganizationIds.includes(id));
}

/**
 * The organizations a session is shown (GET /api/v1/auth/orgs, the device-login page's choices)
 * out of the account's (every organization for a super admin): a session that speaks for the
 * account sees them all, one that enforces SSO on the user included (switching there answers how
 * to sign in); a session made by an organization's provider sees only the organizations it admits,
 * so the provider of one organization learns nothing of the account's others.
 */
export function shownOrganizations<T extends { readonly id: string }>(
  signIn: SessionSignIn,
  organizations: readonly T[],
): T[] {
  const ids = organizations.map(({ id }) => id);
  if (speaksForAccount(signIn, ids)) return [...organizations];
  // Without a password sign-in, whether an organization enforces SSO changes only the reason of a
  // refusal, never an admission: the account's organizations are listed as memberships.
  return organizations.filter(
    ({ id }) =>
      admission(signIn, { organizationId: id, member: true, isSuperAdmin: false, ssoEnforced: false }).admitted,
  );
}
