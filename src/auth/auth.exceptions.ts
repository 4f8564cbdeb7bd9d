import { HttpStatus } from '@nestjs/common';
import { AppException } from '../common/errors/app-exception.js';

export const emailUnverified = () =>
  new AppException(HttpStatus.FORBIDDEN, 'email_unverified', 'Confirm your e-mail address first', {
    hint: 'Follow the link in the confirmation mail',
  });

export const accountSuspended = () =>
  new AppException(HttpStatus.FORBIDDEN, 'account_suspended', 'This account is suspended');

export const accountDisabled = () =>
  new AppException(HttpStatus.FORBIDDEN, 'account_disabled', 'This account is disabled');

export const invalidLink = () =>
  new AppException(HttpStatus.UNPROCESSABLE_ENTITY, 'unprocessable_entity', 'The link is invalid or has expired', {
    hint: 'Sign up again or ask for a new link',
    fields: [{ field: 'token', message: 'is invalid or has expired' }],
  });

/** Password sign-in of a member of an organization that enforces single sign-on. */
export const ssoRequired = (slug: string) =>
  new AppException(
    HttpStatus.FORBIDDEN,
    'sso_required',
    'Your organization requires single sign-on: sign in with your identity provider',
    {
      hint: `Use POST /api/v1/auth/sso/discover with your e-mail address, or open /api/v1/auth/sso/start?org=${slug}`,
      body: { ssoStartUrl: `/api/v1/auth/sso/start?org=${encodeURIComponent(slug)}` },
    },
  );

/**
 * Switching to an organization the session's sign-in does not admit: the session was made by
 * another organization's identity provider (session-admission.ts).
 */
export const signInRequired = (slug: string, hasSso: boolean) =>
  new AppException(
    HttpStatus.FORBIDDEN,
    'sign_in_required',
    "This session was signed in by another organization's identity provider: sign in to this organization first",
    {
      hint: hasSso
        ? `Sign in with POST /api/v1/auth/login (your password) or through /api/v1/auth/sso/start?org=${slug}`
        : 'Sign in with your password (POST /api/v1/auth/login), then switch again',
      body: hasSso ? { ssoStartUrl: `/api/v1/auth/sso/start?org=${encodeURIComponent(slug)}` } : {},
    },
  );

/** The SDK routes' refusals of the app named by X-Bundle-ID and X-Team-ID. */
export const sdkAndroidAppNotFound = () =>
  new AppException(404, 'app_not_found', 'No app has an Android identity with this package name', {
    hint: "Set the app's Android identity in the dashboard (PUT /api/v1/apps/{appID}/android); X-Package-Name must match it exactly",
  });

export const sdkAppNotFound = () =>
  new AppException(404, 'app_not_found', 'No app is registered with this Bundle ID and Team ID', {
    hint: 'Register the app in the dashboard; both values must match exactly',
  });

export const organizationInactive = () =>
  new AppException(403, 'organization_inactive', 'The organization is not active');

export const appInactive = () =>
  new AppException(403, 'app_inactive', 'The app is deactivated', { hint: 'Activate it in the dashboard' });
