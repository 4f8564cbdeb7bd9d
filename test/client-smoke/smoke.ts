// A dashboard's use of the typed client: openapi-fetch over the types openapi-typescript generates
// from GET /api/v1/openapi.json (into ./generated, by test/e2e/typed-client.e2e-spec.ts). It signs
// in, creates an app, lists the apps and reads their fields, every one typed by the document: no
// cast anywhere. Compiled with tsc --strict and run against a live server.
//
//   node dist/smoke.js <base URL> <e-mail> <password>
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './generated/api.js';

const [baseUrl, email, password] = process.argv.slice(2);
if (!baseUrl || !email || !password) throw new Error('usage: smoke.js <base URL> <e-mail> <password>');

const client = createClient<paths>({ baseUrl });

// The session cookie of the sign-in rides on every later request, as a browser would send it, and
// the service's own Origin passes its cross-site check.
let cookie = '';
const session: Middleware = {
  onRequest({ request }) {
    request.headers.set('Origin', baseUrl);
    if (cookie) request.headers.set('Cookie', cookie);
    return request;
  },
  onResponse({ response }) {
    const set = response.headers.getSetCookie().map((value) => value.split(';')[0]);
    if (set.length) cookie = set.join('; ');
    return response;
  },
};
client.use(session);

const login = await client.POST('/api/v1/auth/login', { body: { email, password } });
if (!login.data) throw new Error(`sign-in refused: ${login.response.status} ${login.error?.code ?? ''}`);
const signedIn: string = login.data.user.email;
const organization: string | null = login.data.organization?.slug ?? null;

const suffix = Date.now().toString(36);
const created = await client.POST('/api/v1/apps', {
  body: { appName: 'Smoke', bundleId: `com.example.smoke${suffix}`, teamId: 'A1B2C3D4E5', description: 'typed client' },
});
if (!created.data) throw new Error(`create refused: ${created.response.status} ${created.error?.error ?? ''}`);
const createdId: string = created.data.id;
const maxRisk: number = created.data.riskThresholds.maxAllowedRiskScore;

const apps = await client.GET('/api/v1/apps');
if (!apps.data) throw new Error(`list refused: ${apps.response.status}`);
const listed = apps.data.map((app) => ({
  id: app.id,
  bundleId: app.bundleId,
  active: app.isActive,
  createdAt: new Date(app.createdAt).toISOString(),
}));

const one = await client.GET('/api/v1/apps/{appID}', { params: { path: { appID: createdId } } });
const missing = await client.GET('/api/v1/apps/{appID}', {
  params: { path: { appID: '00000000-0000-4000-8000-000000000000' } },
});

process.stdout.write(
  `${JSON.stringify({
    signedIn,
    organization,
    createdId,
    maxRisk,
    listed,
    fetchedBundleId: one.data?.bundleId ?? null,
    missingStatus: missing.response.status,
    missingCode: missing.error?.code ?? null,
  })}\n`,
);
