import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenID provider for the SSO tests: the `oidc-provider` package (the certified
 * implementation many identity products build on), listening on 127.0.0.1, with its own
 * development login and consent pages. Accounts are set per test; any password is accepted for
 * a known login.
 */
export interface TestIdentityProvider {
  /** The issuer identifier, as its discovery document states it. */
  readonly issuer: string;
  /** The address it listens on (differs from `issuer` only when the test asked for that). */
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Makes `login` a known account with these claims (`email`, `email_verified`, `name`). */
  setAccount(login: string, claims: Record<string, unknown>): void;
  close(): Promise<void>;
}

/** The little of oidc-provider used here, typed locally (the package ships no types). */
type ProviderConstructor = new (
  issuer: string,
  configuration: Record<string, unknown>,
) => { callback(): (request: IncomingMessage, response: ServerResponse) => void };

export async function startIdentityProvider(options: {
  redirectUri: string;
  /** Announce this host as the issuer instead of 127.0.0.1 (for issuer-mismatch tests). */
  issuerHost?: string;
}): Promise<TestIdentityProvider> {
  const name = 'oidc-provider';
  const { default: Provider } = (await import(name)) as { default: ProviderConstructor };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const issuer = `http://${options.issuerHost ?? '127.0.0.1'}:${port}`;
  const clientId = 'attestly-dashboard';
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, Record<string, unknown>>();
  const ttl = (seconds: number) => () => seconds;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: (_context: unknown, id: string) => {
      const claims = accounts.get(id);
      return claims ? { accountId: id, claims: () => ({ sub: id, ...claims }) } : undefined;
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    pkce: { required: () => true },
    ttl: {
      Session: ttl(600),
      Grant: ttl(600),
      Interaction: ttl(600),
      AccessToken: ttl(600),
      IdToken: ttl(600),
      AuthorizationCode: ttl(60),
    },
    features: { devInteractions: { enabled: true } },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    url,
    clientId,
    clientSecret,
    setAccount: (login, claims) => accounts.set(login, claims),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A browser without a screen: a cookie jar per origin (paths ignored, which only sends more
 * cookies than a browser would) and redirects followed by hand, so a test sees each hop.
 */
export class TestBrowser {
  private readonly jars = new Map<string, Map<string, string>>();
  private readonly clientIp = `172.${16 + Math.floor(Math.random() * 16)}.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

  async request(
    url: string,
    init: {
      method?: string;
      form?: Record<string, string>;
      json?: unknown;
      origin?: string;
      /** What a browser says of where a navigation came from (`Sec-Fetch-Site`). */
      site?: 'same-origin' | 'same-site' | 'cross-site' | 'none';
    } = {},
  ): Promise<Response> {
    const target = new URL(url);
    const headers: Record<string, string> = { 'X-Forwarded-For': this.clientIp };
    if (init.site) headers['sec-fetch-site'] = init.site;
    const jar = this.jars.get(target.origin);
    if (jar?.size) headers.cookie = [...jar].map(([key, value]) => `${key}=${value}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    } else if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    if (init.origin) headers.origin = init.origin;
    const response = await fetch(target, {
      method: init.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
      redirect: 'manual',
    });
    for (const cookie of response.headers.getSetCookie()) this.store(target.origin, cookie);
    return response;
  }

  /** Where a redirect answer points, made absolute. */
  static location(response: Response, base: string): string {
    const location = response.headers.get('location');
    if (!location) throw new Error(`expected a redirect, got ${response.status}`);
    return new URL(location, base).href;
  }

  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(origin)?.get(name);
  }

  setCookie(origin: string, name: string, value: string): void {
    if (!this.jars.has(origin)) this.jars.set(origin, new Map());
    this.jars.get(origin)!.set(name, value);
  }

  private store(origin: string, header: string): void {
    const [pair, ...attributes] = header.split(';');
    const separator = pair.indexOf('=');
    const name = pair.slice(0, separator).trim();
    const value = pair.slice(separator + 1).trim();
    if (!this.jars.has(origin)) this.jars.set(origin, new Map());
    const jar = this.jars.get(origin)!;
    const expired = attributes.some((attribute) => {
      const [key, raw] = attribute.split('=').map((part) => part.trim().toLowerCase());
      return (key === 'expires' && Date.parse(raw) <= Date.now()) || (key === 'max-age' && Number(raw) <= 0);
    });
    if (expired || value === '') jar.delete(name);
    else jar.set(name, value);
  }
}

/**
 * What a person does at the provider between the service's redirect and the callback: the
 * login form, then the consent form. Returns the redirect back to the service (the callback URL
 * with code, state and iss), without following it.
 */
export async function authorizeAtProvider(browser: TestBrowser, authorizationUrl: string, login: string) {
  let url = authorizationUrl;
  for (let hop = 0; hop < 12; hop++) {
    const response = await browser.request(url);
    if (response.status === 303 || response.status === 302) {
      const next = TestBrowser.location(response, url);
      if (!next.startsWith(new URL(authorizationUrl).origin)) return next;
      url = next;
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`the provider answered ${response.status}: ${page.slice(0, 500)}`);
    const action = /action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
    if (!action || !prompt) throw new Error(`no interaction form on the provider's page: ${page.slice(0, 500)}`);
    const form: Record<string, string> = prompt === 'login' ? { prompt, login, password: 'any-password' } : { prompt };
    const submitted = await browser.request(new URL(action, url).href, { form });
    url = TestBrowser.location(submitted, url);
  }
  throw new Error('the provider never redirected back');
}
