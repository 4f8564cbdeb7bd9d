import { describe, expect, it } from '@jest/globals';
import { MAX_CONTEXT_ATTRIBUTES, parseOfrepRequest, type OfrepCaller } from './ofrep-context.js';

const device: OfrepCaller = { kind: 'device', deviceId: 'key-1', riskScore: 12 };
const server: OfrepCaller = { kind: 'server' };

describe('parseOfrepRequest', () => {
  it("builds a device's context from its token and what the request adds", () => {
    expect(
      parseOfrepRequest(
        { context: { appVersion: '2.1', country: 'FR', plan: 'pro', seats: 12, trial: false, gone: null } },
        device,
      ),
    ).toEqual({
      environment: 'production',
      deviceKeyId: 'key-1',
      caller: 'device',
      context: {
        deviceId: 'key-1',
        deviceModel: null,
        osVersion: null,
        appVersion: '2.1',
        locale: null,
        country: 'FR',
        userId: null,
        riskScore: 12,
        attestationStatus: 'verified',
        custom: { plan: 'pro', seats: '12', trial: 'false' },
      },
    });
  });

  it("takes a server's targetingKey as the device id, its risk score and environment", () => {
    const parsed = parseOfrepRequest(
      { context: { targetingKey: 'device-9', riskScore: 40, environment: 'staging' } },
      server,
    );
    expect(parsed).toMatchObject({
      environment: 'staging',
      deviceKeyId: 'device-9',
      caller: 'server',
      context: { deviceId: 'device-9', riskScore: 40, attestationStatus: 'server', custom: null },
    });
  });

  it('lets a device repeat its own subject as targetingKey, and nothing else', () => {
    expect(parseOfrepRequest({ context: { targetingKey: 'key-1' } }, device)).toMatchObject({ deviceKeyId: 'key-1' });
    expect(parseOfrepRequest({ context: { targetingKey: 'key-2' } }, device)).toMatchObject({
      errorCode: 'INVALID_CONTEXT',
    });
  });

  it('treats a missing context as empty, and requires a targetingKey only from a server', () => {
    expect(parseOfrepRequest({}, device)).toMatchObject({ deviceKeyId: 'key-1' });
    expect(parseOfrepRequest({}, server)).toMatchObject({ errorCode: 'TARGETING_KEY_MISSING' });
    expect(parseOfrepRequest({ context: { targetingKey: '' } }, server)).toMatchObject({
      errorCode: 'TARGETING_KEY_MISSING',
    });
  });

  it('refuses what is not an evaluation request as PARSE_ERROR', () => {
    for (const body of [undefined, null, 'x', [1], { context: [1] }, { context: 'x' }]) {
      expect(parseOfrepRequest(body, device)).toMatchObject({ errorCode: 'PARSE_ERROR' });
    }
  });

  it.each([
    ['a nested object', { plan: { tier: 'pro' } }],
    ['a list', { tags: ['a'] }],
    ['an unknown environment', { environment: 'qa' }],
    ['a mistyped known attribute', { appVersion: 2 }],
    ['an over-long known attribute', { country: 'x'.repeat(11) }],
    ['an over-long custom value', { note: 'x'.repeat(1001) }],
    ['an over-long attribute name', { ['n'.repeat(101)]: 'x' }],
    ['the device id', { deviceId: 'other' }],
    ['the attestation status', { attestationStatus: 'verified' }],
    ['a risk score with a device token', { riskScore: 0 }],
    ['a non-finite number', { ratio: Number.POSITIVE_INFINITY }],
  ])('refuses %s as INVALID_CONTEXT', (_case, context) => {
    expect(parseOfrepRequest({ context }, device)).toMatchObject({ errorCode: 'INVALID_CONTEXT' });
  });

  it('refuses a risk score out of range from a server', () => {
    expect(parseOfrepRequest({ context: { targetingKey: 'd', riskScore: 101 } }, server)).toMatchObject({
      errorCode: 'INVALID_CONTEXT',
    });
  });

  it('bounds the number of attributes', () => {
    const within = Object.fromEntries(Array.from({ length: MAX_CONTEXT_ATTRIBUTES }, (_, i) => [`a${i}`, 'x']));
    expect(parseOfrepRequest({ context: within }, device)).toHaveProperty('context');
    expect(parseOfrepRequest({ context: { ...within, one: 'more' } }, device)).toMatchObject({
      errorCode: 'INVALID_CONTEXT',
    });
  });

  it('keeps names of Object.prototype as ordinary custom attributes', () => {
    const parsed = parseOfrepRequest(JSON.parse('{"context":{"__proto__":"a","toString":"b"}}'), device);
    expect(parsed).toHaveProperty('context.custom.toString', 'b');
    expect(Object.keys((parsed as { context: { custom: object } }).context.custom).sort()).toEqual([
      '__proto__',
      'toString',
    ]);
  });
});
