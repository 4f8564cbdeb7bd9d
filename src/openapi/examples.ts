/**
 * Examples of the SDK routes and the main dashboard routes, by `METHOD /openapi/path`: a request
 * body and the success answer. The OpenAPI document's test validates each against its schema.
 */
export interface RouteExample {
  readonly request?: unknown;
  readonly response: unknown;
}

const APP_ID = '3f0c9a52-6a1e-4c1b-9d51-2b7f8c1e4a10';
const FLAG_ID = '8d2e4b71-0c3a-4f5e-a6b7-1c2d3e4f5a6b';
const AT = '2026-03-02T09:30:00.000Z';
const LATER = '2026-03-02T10:30:00.000Z';

const app = {
  id: APP_ID,
  appName: 'Acme Notes',
  bundleId: 'com.acme.notes',
  teamId: 'A1B2C3D4E5',
  description: 'The iOS notes app',
  isActive: true,
  isPrimary: true,
  jwtConfiguration: {
    overrideExpirationTime: null,
    includeAppMetadata: true,
    customAudience: null,
    customIssuer: null,
  },
  riskThresholds: {
    maxAllowedRiskScore: 80,
    blockOnJailbreak: false,
    minAttestationCount: 0,
    maxDeviceAge: null,
    requireAppStoreReceipt: false,
  },
  analyticsEnabled: true,
  webhookEnabled: false,
  requireSignedSubject: false,
  hasSubjectSigningSecret: false,
  debugTokensEnabled: false,
  createdAt: AT,
  updatedAt: AT,
};

const disabled = { enabled: false, value: 'false', rules: [] };
const flag = {
  id: FLAG_ID,
  appId: APP_ID,
  key: 'new_editor',
  name: 'New editor',
  description: 'The rich-text editor',
  valueType: 'boolean',
  defaultValue: 'false',
  environments: {
    production: {
      enabled: true,
      value: 'false',
      rules: [
        {
          id: 'b5c6d7e8-f901-4a2b-8c3d-4e5f6a7b8c9d',
          name: 'Beta testers',
          priority: 0,
          isActive: true,
          conditions: [{ attribute: 'app_version', operator: 'greater_than_or_equal', value: '2.4.0' }],
          rolloutPercentage: 25,
          value: 'true',
        },
      ],
    },
    staging: disabled,
    development: disabled,
  },
  version: 3,
  createdBy: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
  createdAt: AT,
  updatedAt: LATER,
};

const token = {
  token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjRmN2MifQ.eyJzdWIiOiJhYmMifQ.c2lnbmF0dXJl',
  tokenType: 'Bearer',
  expiresAt: LATER,
  riskScore: 12,
};

const feature = {
  id: '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d',
  appId: APP_ID,
  title: 'Dark mode for the editor',
  description: 'Easier on the eyes at night.',
  status: 'pending',
  voteCount: 1,
  commentCount: 0,
  createdAt: AT,
  updatedAt: AT,
};

const releaseNote = {
  id: '6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e',
  appId: APP_ID,
  version: '2.4.0',
  title: 'Faster sync',
  body: 'Notes now sync in the background.',
  isPublished: true,
  publishedAt: AT,
  createdAt: AT,
  updatedAt: AT,
};

export const ROUTE_EXAMPLES: Readonly<Record<string, RouteExample>> = {
  'GET /api/v1/attestation/challenge': {
    response: { challenge: 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq8M=', expiresAt: '2026-03-02T09:35:00.000Z' },
  },
  'POST /api/v1/attestation/validate': {
    request: {
      keyId: 'Zm9vYmFyMTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A=',
      attestationObject: 'o2NmbXRvYXBwbGUtYXBwYXR0ZXN0',
      challenge: 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq8M=',
    },
    response: token,
  },
  'POST /api/v1/attestation/refresh': {
    request: {
      keyId: 'Zm9vYmFyMTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A=',
      assertion: 'omlzaWduYXR1cmVYRzBFAiEA',
      challenge: 'q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq8M=',
    },
    response: token,
  },
  'GET /api/v1/flags': {
    response: { flags: { new_editor: true, max_notes: 500, theme: 'dark', paywall: { variant: 'b', trialDays: 7 } } },
  },
  'POST /api/v1/flags/{flagId}/evaluate': {
    request: { environment: 'production', appVersion: '2.4.1', deviceId: 'device-42' },
    response: {
      flagKey: 'new_editor',
      flagId: FLAG_ID,
      environment: 'production',
      resolvedValue: 'true',
      valueType: 'boolean',
      matchedRule: 'Beta testers',
      isDefault: false,
      trace: [],
    },
  },
  'POST /api/v1/feedback/features': {
    request: { title: 'Dark mode for the editor', description: 'Easier on the eyes at night.', submitterId: 'u-42' },
    response: feature,
  },
  'GET /api/v1/feedback/features': {
    response: { items: [feature], metadata: { page: 1, per: 20, total: 1 } },
  },
  'POST /api/v1/support/tickets': {
    request: { subject: 'Sync stopped', body: 'My notes no longer sync since 2.4.0.', submitterId: 'u-42' },
    response: {
      id: '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f',
      subject: 'Sync stopped',
      status: 'open',
      priority: 'normal',
      messageCount: 1,
      createdAt: AT,
      updatedAt: AT,
      messages: [
        {
          id: '8d9e0f1a-2b3c-4d4e-9f5a-6b7c8d9e0f1a',
          ticketId: '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f',
          authorType: 'user',
          body: 'My notes no longer sync since 2.4.0.',
          createdAt: AT,
        },
      ],
    },
  },
  'GET /api/v1/release-notes/pending': { response: { items: [releaseNote] } },

  'POST /api/v1/auth/login': {
    request: { email: 'dana@acme.example', password: 'correct-horse-battery' },
    response: {
      user: {
        id: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
        email: 'dana@acme.example',
        role: 'none',
        organizationId: null,
        isActive: true,
      },
      organization: null,
      entitlements: null,
    },
  },
  'GET /api/v1/apps': { response: [app] },
  'POST /api/v1/apps': {
    request: {
      appName: 'Acme Notes',
      bundleId: 'com.acme.notes',
      teamId: 'A1B2C3D4E5',
      description: 'The iOS notes app',
    },
    response: app,
  },
  'GET /api/v1/apps/{appID}': { response: app },
  'GET /api/v1/dashboard/apps/{appId}/flags': { response: [flag] },
  'POST /api/v1/dashboard/apps/{appId}/flags': {
    request: {
      key: 'new_editor',
      name: 'New editor',
      description: 'The rich-text editor',
      valueType: 'boolean',
      defaultValue: 'false',
    },
    response: {
      ...flag,
      version: 1,
      updatedAt: AT,
      environments: { production: disabled, staging: disabled, development: disabled },
    },
  },
  'POST /api/v1/org/api-keys': {
    request: { name: 'CI deploys', scopes: ['flags:read', 'apps:read'] },
    response: {
      id: '9e0f1a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b',
      name: 'CI deploys',
      type: 'aat',
      prefix: 'aat_3kq9',
      scopes: ['flags:read', 'apps:read'],
      createdAt: AT,
      lastUsedAt: null,
      expiresAt: null,
      key: 'aat_3kq9Zr7w…',
    },
  },
  'POST /api/v1/org/webhooks': {
    request: { url: 'https://hooks.acme.example/attestly', events: ['device.high_risk'] },
    response: {
      id: '0f1a2b3c-4d5e-4f6a-9b7c-8d9e0f1a2b3c',
      url: 'https://hooks.acme.example/attestly',
      events: ['device.high_risk'],
      isActive: true,
      description: '',
      createdAt: AT,
      secret: 'whsec_5f2b…',
    },
  },
  'GET /api/v1/org/settings': {
    response: {
      id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
      name: 'Acme',
      slug: 'acme',
      serviceTier: 'Pro',
      serviceTierRawValue: 'pro',
      billingEmail: 'billing@acme.example',
      createdAt: AT,
      updatedAt: AT,
    },
  },
};
