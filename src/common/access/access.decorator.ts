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
  'claims:read',
  'claims:write',
  'flags:read',
  'flags:write',
  'apps:read',
  'tokens:verify',
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** The scope an organization's key needs on SDK routes that take a device token or a key (`deviceToken`). */
export const SDK_KEY_SCOPE: ApiKeyScope = 'flags:read';

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
  /**
   * A Bearer API key of the caller's organization holding every listed scope (`[]`: any key).
   * Organization keys (`aat_`, `service_`) get exactly their scopes; a personal key (`gpat_`) acts
   * as its user: it also needs the user's current role in the key's organization to meet `session`.
   */
  readonly apiKey?: readonly ApiKeyScope[];
  /**
   * Routes of the dashboard that also take personal keys (`gpat_`, the CLI's login key) but no
   * organization key: the key needs these scopes and its user's current role must meet `session`.
   */
  readonly personalKey?: readonly ApiKeyScope[];
  /** `X-Bundle-ID` + `X-Team-ID` resolve an app (the SDK surfaces). */
  readonly tenant?: boolean;
  /** With `tenant`: also a Bearer attestation JWT for that app (or an API key of its organization). */
  readonly deviceToken?: boolean;
  /**
   * With `tenant` alone: identity headers suffice, but a Bearer attestation JWT sent along is
   * verified as on `deviceToken` routes (a bad one is refused), so the route knows which device
   * asks (`requestDeviceId`, decision 0074).
   */
  readonly deviceTokenIfSent?: boolean;
}

export const ACCESS_KEY = 'access';

export const Access = (rule: AccessRule) => SetMetadata(ACCESS_KEY, rule);

export const Public = () => Access({ public: true });
