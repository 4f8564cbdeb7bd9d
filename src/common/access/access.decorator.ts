import { SetMetadata } from '@nestjs/common';

export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export const API_KEY_SCOPES = [
  'feedback:read',
  'feedback:manage',
  'feedback:write',
  'org:read',
  'admin:team',
  'release_notes:read',
  'release_notes:write',
  'entitlements:write',
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/**
 * Who may call a route. Every route declares one; the access guard refuses undeclared routes,
 * and a test lists every route with its declaration.
 */
export interface AccessRule {
  /** No authentication at all. */
  readonly public?: boolean;
  /**
   * A dashboard session. `user`: signed in, no organization needed; a role: the minimum role in
   * the session's active organization.
   */
  readonly session?: 'user' | Role;
  /** A Bearer API key of the caller's organization holding every listed scope (`[]`: any key). */
  readonly apiKey?: readonly ApiKeyScope[];
  /** `X-Bundle-ID` + `X-Team-ID` resolve an app (the SDK surfaces). */
  readonly tenant?: boolean;
  /** With `tenant`: also a Bearer attestation JWT for that app (or an API key of its organization). */
  readonly deviceToken?: boolean;
}

export const ACCESS_KEY = 'access';

export const Access = (rule: AccessRule) => SetMetadata(ACCESS_KEY, rule);

export const Public = () => Access({ public: true });
