import { AppException, conflict, forbidden, notFound } from '../common/errors/app-exception.js';

export const appNotFound = () => notFound('App');

export const appLimitReached = (maxApps: number) =>
  new AppException(403, 'app_limit_reached', `Your plan allows ${maxApps} apps`, {
    hint: 'Upgrade the plan or delete an app',
  });

export const duplicateApp = () =>
  conflict('An app with this Bundle ID and Team ID is already registered', {
    hint: 'Bundle ID + Team ID pairs are unique across all organizations',
  });

export const subjectSecretMissing = (appId: string) =>
  new AppException(400, 'subject_secret_missing', 'Generate a subject signing secret first', {
    hint: `POST /api/v1/apps/${appId}/subject-signing-secret, then sign subject ids on your backend`,
  });

export const lastApp = () =>
  new AppException(403, 'last_app', 'The last remaining app cannot be deleted', {
    hint: 'Delete the organization instead, or add another app first',
  });

export const inactiveAppCannotBePrimary = () =>
  new AppException(403, 'app_inactive', 'An inactive app cannot be primary', { hint: 'Activate it first' });

export const primaryCannotBeDeactivated = () =>
  forbidden('The primary app cannot be deactivated', { hint: 'Make another app primary first' });

export const iosIdentityImmutable = () =>
  conflict('The Bundle ID and Team ID of an app cannot be changed once set', {
    hint: 'An Android-only app may be given them once; register another app for another iOS identity',
  });
