import { conflict, invalidField, notFound } from '../common/errors/app-exception.js';

export const androidIdentityNotFound = () => notFound('Android identity');

export const duplicatePackage = () =>
  conflict('An app with this Android package name is already registered', {
    hint: 'Package names are unique across all organizations',
  });

export const androidKeysRequired = () =>
  invalidField('decryptionKey', 'decryptionKey and verificationKey are required when the Android identity is created');

export const invalidAndroidField = (field: string, message: string) => invalidField(field, message);
