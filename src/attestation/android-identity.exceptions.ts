import { conflict, invalidField, notFound } from '../common/errors/app-exception.js';

export const androidIdentityNotFound = () => notFound('Android identity');

export const duplicatePackage = () =>
  conflict('An app with this Android package name is already registered', {
    hint: 'Package names are unique across all organizations',
  });

export const androidKeysRequired = (prefix: string) =>
  invalidField(
    `${prefix}decryptionKey`,
    'decryptionKey and verificationKey are required when the Android identity is created',
  );

export const onlyIdentity = () =>
  conflict("The Android identity is this app's only identity", {
    hint: 'Give the app a Bundle ID and Team ID first (PUT /api/v1/apps/:appID), or delete the app',
  });

export const invalidAndroidField = (field: string, message: string) => invalidField(field, message);
