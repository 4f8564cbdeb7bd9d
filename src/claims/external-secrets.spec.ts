import { describe, expect, it } from '@jest/globals';
import type { ExternalConfig, FieldError } from './engine/index.js';
import { REDACTED, redactExternalConfig, restoreRedactedSecrets } from './external-secrets.js';

const stored: ExternalConfig = {
  endpoint: 'https://crm.example.com/points',
  method: 'GET',
  headers: { Authorization: 'Token abc', 'X-Client': 'attestly' },
  responseMapping: { jsonPath: '$.points' },
  authentication: {
    type: 'oauth2',
    credentials: { tokenUrl: 'https://id.example.com/token', clientId: 'app', clientSecret: 's3cret' },
  },
};

describe('external claim secrets', () => {
  it('hides secret credentials and secret-looking headers, and nothing else', () => {
    const redacted = redactExternalConfig(stored);
    expect(redacted.headers).toEqual({ Authorization: REDACTED, 'X-Client': 'attestly' });
    expect(redacted.authentication?.credentials).toEqual({
      tokenUrl: 'https://id.example.com/token',
      clientId: 'app',
      clientSecret: REDACTED,
    });
    expect(stored.authentication?.credentials.clientSecret).toBe('s3cret');
  });

  it('puts the stored secrets back where the placeholder comes back', () => {
    const problems: FieldError[] = [];
    const restored = restoreRedactedSecrets({ ...redactExternalConfig(stored), timeoutSeconds: 3 }, stored, problems);
    expect(problems).toEqual([]);
    expect(restored).toMatchObject({
      headers: stored.headers,
      authentication: stored.authentication,
      timeoutSeconds: 3,
    });
  });

  it('refuses a placeholder with no stored value behind it, also after a change of authentication type', () => {
    const problems: FieldError[] = [];
    restoreRedactedSecrets(
      {
        ...stored,
        headers: { 'X-Api-Key': REDACTED },
        authentication: { type: 'bearer', credentials: { token: REDACTED } },
      },
      stored,
      problems,
    );
    expect(problems.map((problem) => problem.field)).toEqual([
      'externalConfig.headers.X-Api-Key',
      'externalConfig.authentication.credentials.token',
    ]);
  });
});
