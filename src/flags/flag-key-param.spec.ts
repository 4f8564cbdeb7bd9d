import { describe, expect, it } from '@jest/globals';
import { invalidField } from '../common/errors/app-exception.js';
import { FlagAddressPipe } from './flag-key-param.js';

const FLAG_ID = '3f0c2a7e-9b1d-4c5e-8f2a-1b2c3d4e5f60';
const APP_ID = '7a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d';

/** The refusal `UuidParam` and the key rule answer: 400 naming the parameter. */
const refusal = (field: string, message: string) => {
  const expected = invalidField(field, message);
  return { status: 400, code: expected.code, message: expected.message };
};
const NOT_A_UUID = (field: string) => refusal(field, 'must be a UUID');
const NOT_A_KEY = refusal('flagKey', "must be a flag key of this app or the flag's UUID");

describe('FlagAddressPipe', () => {
  const pipe = new FlagAddressPipe();

  it('reads a flag id', async () => {
    await expect(pipe.transform({ flagId: FLAG_ID })).resolves.toEqual({ flagId: FLAG_ID });
    // Other parameters of the path (`:environment`, `:overrideId`) are not its concern.
    await expect(pipe.transform({ flagId: FLAG_ID, environment: 'production' })).resolves.toEqual({ flagId: FLAG_ID });
  });

  it('reads an app and a flag key, or a UUID in the key position', async () => {
    await expect(pipe.transform({ appId: APP_ID, flagKey: 'dark.mode-v2' })).resolves.toEqual({
      appId: APP_ID,
      flagKey: 'dark.mode-v2',
    });
    await expect(pipe.transform({ appId: APP_ID, flagKey: FLAG_ID, scheduleId: FLAG_ID })).resolves.toEqual({
      appId: APP_ID,
      flagKey: FLAG_ID,
    });
  });

  it.each(['not-a-uuid', '', '3f0c2a7e-9b1d-4c5e-8f2a-1b2c3d4e5f6', `${FLAG_ID}0`, '3f0c2a7e9b1d4c5e8f2a1b2c3d4e5f60'])(
    'refuses the flag id %j as UuidParam does',
    async (flagId) => {
      await expect(pipe.transform({ flagId })).rejects.toMatchObject(NOT_A_UUID('flagId'));
    },
  );

  it.each(['not-a-uuid', '', `${APP_ID}x`])('refuses the app id %j', async (appId) => {
    await expect(pipe.transform({ appId, flagKey: 'checkout' })).rejects.toMatchObject(NOT_A_UUID('appId'));
  });

  it('checks the app id before the key', async () => {
    await expect(pipe.transform({ appId: 'nope', flagKey: 'bad key!' })).rejects.toMatchObject(NOT_A_UUID('appId'));
  });

  it.each(['bad key!', '1starts-with-digit', '_underscore', '', 'a'.repeat(101), 'ключ'])(
    'refuses the flag key %j',
    async (flagKey) => {
      await expect(pipe.transform({ appId: APP_ID, flagKey })).rejects.toMatchObject(NOT_A_KEY);
    },
  );

  it('refuses a route naming no flag as a mistake of the code, not a 400', async () => {
    await expect(pipe.transform({})).rejects.toThrow(/neither :flagId nor :appId and :flagKey/);
    await expect(pipe.transform({ appId: APP_ID })).rejects.toThrow(/neither/);
    await expect(pipe.transform(undefined)).rejects.toThrow(/neither/);
  });

  it('declares its UUID parameters for the route tables', () => {
    expect(pipe.uuidParams).toEqual(['flagId', 'appId']);
  });
});
