import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import type { ProviderRegistration } from '../../src/auth/sso/oidc-client.js';

/** What `discoverProvider` refuses with; the fake module of oidc-client.ts exports this one. */
export class FakeProviderProblem extends Error {
  override readonly name = 'ProviderProblem';
}

interface IssuedCode {
  readonly claims: Record<string, unknown>;
  readonly nonce: string;
  readonly challenge: string;
  readonly redirectUri: string;
}

/**
 * An OpenID provider in memory, for the SSO services' unit tests: `discover` stands in for
 * oidc-client.ts's `discoverProvider` and answers a real openid-client Configuration whose fetch is
 * this object (no network), so openid-client itself checks state, `iss`, nonce and the ID token as
 * in production. `authorize` is the person at the provider: it answers the callback's query for
 * the claims given. The token endpoint checks the client's secret and the PKCE verifier, and
 * takes each code once.
 */
export class FakeOidcProvider {
  readonly issuer = 'https://idp.test';
  readonly clientId = 'attestly-dashboard';
  readonly clientSecret = 'provider-client-secret';
  /** How many times discovery ran (the sign-in caches it per connection version). */
  discoveries = 0;
  /** While set, discovery fails as an unreachable provider does. */
  unreachable = false;
  /** Issues the next ID tokens with this issuer instead of its own. */
  idTokenIssuer: string | null = null;
  private readonly codes = new Map<string, IssuedCode>();
  private keys: Awaited<ReturnType<typeof generateKeyPair>> | null = null;

  discover(registration: ProviderRegistration): Promise<oidc.Configuration> {
    this.discoveries++;
    if (this.unreachable) return Promise.reject(new FakeProviderProblem('the issuer refused the connection'));
    if (registration.issuer.replace(/\/$/, '') !== this.issuer) {
      return Promise.reject(
        new FakeProviderProblem(`the discovery document's issuer does not match ${registration.issuer} exactly`),
      );
    }
    const config = new oidc.Configuration(
      {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/auth`,
        token_endpoint: `${this.issuer}/token`,
        jwks_uri: `${this.issuer}/jwks`,
        authorization_response_iss_parameter_supported: true,
      },
      registration.clientId,
      registration.clientSecret,
      oidc.ClientSecretBasic(registration.clientSecret),
    );
    config[oidc.customFetch] = (url, options) => this.fetch(url, options);
    return Promise.resolve(config);
  }

  /** The person signs in at the provider: the query string the provider redirects back with. */
  authorize(authorizationUrl: string, claims: Record<string, unknown>): string {
    const request = new URL(authorizationUrl).searchParams;
    const code = randomBytes(16).toString('base64url');
    this.codes.set(code, {
      claims,
      nonce: request.get('nonce') ?? '',
      challenge: request.get('code_challenge') ?? '',
      redirectUri: request.get('redirect_uri') ?? '',
    });
    return new URLSearchParams({ code, state: request.get('state') ?? '', iss: this.issuer }).toString();
  }

  private async fetch(url: string, options: oidc.CustomFetchOptions): Promise<Response> {
    if (url !== `${this.issuer}/token` || options.method !== 'POST') return new Response(null, { status: 404 });
    const authorization = Object.entries(options.headers).find(([name]) => name.toLowerCase() === 'authorization');
    const [id, secret] = Buffer.from(authorization?.[1].replace(/^Basic /, '') ?? '', 'base64')
      .toString()
      .split(':')
      .map((part) => decodeURIComponent(part.replaceAll('+', ' ')));
    if (id !== this.clientId || secret !== this.clientSecret) return tokenError(401, 'invalid_client');
    // openid-client sends the token request's form as URLSearchParams.
    const form = options.body instanceof URLSearchParams ? options.body : new URLSearchParams();
    const code = form.get('code') ?? '';
    const issued = this.codes.get(code);
    this.codes.delete(code);
    const verifier = form.get('code_verifier') ?? '';
    if (
      !issued ||
      form.get('grant_type') !== 'authorization_code' ||
      form.get('redirect_uri') !== issued.redirectUri ||
      createHash('sha256').update(verifier).digest('base64url') !== issued.challenge
    ) {
      return tokenError(400, 'invalid_grant');
    }
    this.keys ??= await generateKeyPair('RS256');
    const idToken = await new SignJWT({ nonce: issued.nonce, ...issued.claims })
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer(this.idTokenIssuer ?? this.issuer)
      .setAudience(this.clientId)
      .setSubject(typeof issued.claims.sub === 'string' ? issued.claims.sub : 'subject-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(this.keys.privateKey);
    return Response.json({ access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', id_token: idToken });
  }
}

function tokenError(status: number, error: string): Response {
  return Response.json({ error }, { status });
}
