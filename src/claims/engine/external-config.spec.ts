import { describe, expect, it } from '@jest/globals';
import type { DeviceContext } from './claim-types.js';
import { jsonEscape, renderTemplate, validateExternalConfig } from './external-config.js';

const strict = { allowPrivateNetworks: false };
const relaxed = { allowPrivateNetworks: true };

const valid = {
  endpoint: 'https://partner.example.com/v1/devices',
  method: 'POST',
  headers: { 'X-Tenant': 'acme' },
  queryParameters: { key: '{{device.keyId}}' },
  bodyTemplate: '{"key":"{{device.keyId}}","plan":"{{data.plan}}","at":{{now}}}',
  responseMapping: { jsonPath: '$.data.tier', defaultValue: 'none', transformExpression: 'upper(value)' },
  cacheSeconds: 300,
  timeoutSeconds: 5,
  retryCount: 2,
  authentication: {
    type: 'oauth2',
    credentials: { tokenUrl: 'https://auth.example.com/token', client_id: 'a', client_secret: 'b' },
  },
};

function fieldsOf(config: unknown, options = strict): string[] {
  return validateExternalConfig(config, options).map((problem) => problem.field);
}

describe('validateExternalConfig', () => {
  it('accepts a complete configuration', () => {
    expect(validateExternalConfig(valid, strict)).toEqual([]);
  });

  it('accepts the minimal configuration and leaves the rest to defaults', () => {
    expect(
      validateExternalConfig(
        { endpoint: 'https://x.example.com', method: 'GET', responseMapping: { jsonPath: '$' } },
        strict,
      ),
    ).toEqual([]);
  });

  it.each([
    ['http://partner.example.com', 'must use https'],
    ['https://127.0.0.1/x', 'must not point to a private'],
    ['https://[fe80::1]/x', 'must not point to a private'],
    ['https://user:pw@partner.example.com', 'must not contain credentials'],
    ['ftp://partner.example.com', 'must use https'],
    ['partner.example.com', 'must be a valid URL'],
  ])('refuses endpoint %s', (endpoint, message) => {
    expect(validateExternalConfig({ ...valid, endpoint }, strict)).toEqual([
      { field: 'externalConfig.endpoint', message: expect.stringContaining(message) },
    ]);
  });

  it('admits http and private addresses when private networks are allowed', () => {
    expect(fieldsOf({ ...valid, endpoint: 'http://10.0.0.5:8080/x' }, relaxed)).toEqual([]);
    expect(fieldsOf({ ...valid, endpoint: 'ftp://10.0.0.5/x' }, relaxed)).toEqual(['externalConfig.endpoint']);
  });

  it('names every faulty field', () => {
    expect(
      fieldsOf({
        endpoint: 'https://partner.example.com',
        method: 'DELETE',
        headers: { 'Bad Header': 'x', Host: 'evil', 'X-Ok': 'line\nbreak' },
        queryParameters: { key: '{{device.secret}}' },
        bodyTemplate: '{"a":"{{process.env}}"}',
        responseMapping: { jsonPath: '$..[?(@.a)]', defaultValue: 5, transformExpression: 'eval(value)' },
        cacheSeconds: -1,
        timeoutSeconds: 0,
        retryCount: 1.5,
        authentication: { type: 'api_key', credentials: { header: 'Bad Header' } },
      }),
    ).toEqual([
      'externalConfig.method',
      'externalConfig.headers.Bad Header',
      'externalConfig.headers.Host',
      'externalConfig.headers.X-Ok',
      'externalConfig.queryParameters.key',
      'externalConfig.bodyTemplate',
      'externalConfig.responseMapping.jsonPath',
      'externalConfig.responseMapping.defaultValue',
      'externalConfig.responseMapping.transformExpression',
      'externalConfig.cacheSeconds',
      'externalConfig.timeoutSeconds',
      'externalConfig.retryCount',
      'externalConfig.authentication.credentials.apiKey',
      'externalConfig.authentication.credentials.headerName',
    ]);
  });

  it('requires the credentials of each authentication type', () => {
    const withAuth = (authentication: unknown) => fieldsOf({ ...valid, authentication });
    expect(withAuth({ type: 'basic', credentials: { username: 'a' } })).toEqual([
      'externalConfig.authentication.credentials.password',
    ]);
    expect(withAuth({ type: 'bearer', credentials: { token: '' } })).toEqual([
      'externalConfig.authentication.credentials.token',
    ]);
    expect(withAuth({ type: 'oauth2', credentials: { tokenUrl: 'http://auth.example.com', clientId: 'a' } })).toEqual([
      'externalConfig.authentication.credentials.clientSecret',
      'externalConfig.authentication.credentials.tokenUrl',
    ]);
    expect(withAuth({ type: 'digest', credentials: {} })).toEqual(['externalConfig.authentication.type']);
    expect(withAuth({ type: 'bearer', credentials: { token: 'a\r\nX-Injected: 1' } })).toEqual([
      'externalConfig.authentication.credentials.token',
    ]);
    expect(withAuth(null)).toEqual([]);
  });

  it('refuses a body with GET and a missing mapping', () => {
    expect(fieldsOf({ ...valid, method: 'GET' })).toEqual(['externalConfig.bodyTemplate']);
    expect(fieldsOf({ ...valid, responseMapping: undefined })).toEqual(['externalConfig.responseMapping']);
    expect(fieldsOf('https://x')).toEqual(['externalConfig']);
  });
});

describe('renderTemplate', () => {
  const context: DeviceContext = {
    keyId: 'k"1',
    riskScore: 5,
    attestationCount: 1,
    jailbreakDetected: true,
    additionalData: { a: 'b\\c' },
  };

  it('fills device, data and now placeholders, escaped for the target', () => {
    expect(
      renderTemplate(
        '{"k":"{{device.keyId}}","a":"{{data.a}}","j":{{device.jailbreakDetected}},"t":{{now}}}',
        context,
        7,
        jsonEscape,
      ),
    ).toBe('{"k":"k\\"1","a":"b\\\\c","j":true,"t":7}');
    expect(renderTemplate('{{device.model}}|{{data.none}}', context, 0, (text) => text)).toBe('|');
  });

  it('refuses unknown placeholders', () => {
    expect(() => renderTemplate('{{device.constructor}}', context, 0, jsonEscape)).toThrow('unknown placeholder');
    expect(() => renderTemplate('{{env.HOME}}', context, 0, jsonEscape)).toThrow('unknown placeholder');
  });
});
