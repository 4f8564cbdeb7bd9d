import * as oidc from 'openid-client';
import { UnsafeUrlError, checkedOutboundUrl } from '../../common/ssrf-guard.js';
import { ResponseTooLargeError, guardedFetch } from './guarded-fetch.js';

/** What the service needs to talk to one organization's identity provider. */
export interface ProviderRegistration {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** The identity provider cannot be used; `message` says why, for a 400 or the operator's log. */
export class ProviderProblem extends Error {
  override readonly name = 'ProviderProblem';
}

/** Each provider call must answer within this (discovery, keys, token, userinfo). */
const TIMEOUT_SECONDS = 10;

/**
 * Fetches and checks the issuer's discovery document (through the SSRF guard) and returns the
 * client configuration for it: openid-client itself checks that the document's `issuer` is the
 * one configured; this adds what sign-in needs (the code flow, endpoints, PKCE with S256, a
 * client authentication method the service can use).
 */
export async function discoverProvider(
  registration: ProviderRegistration,
  allowPrivateNetworks: boolean,
): Promise<oidc.Configuration> {
  let issuer: URL;
  try {
    issuer = new URL(registration.issuer);
  } catch {
    throw new ProviderProblem('issuer must be an absolute URL such as https://idp.example.com');
  }
  if (issuer.search || issuer.hash) throw new ProviderProblem('issuer must not carry a query or a fragment');
  try {
    checkedOutboundUrl(issuer.href, allowPrivateNetworks);
  } catch (error) {
    if (error instanceof UnsafeUrlError) throw new ProviderProblem(`the issuer's address is refused: ${error.message}`);
    throw error;
  }
  const fetch = guardedFetch(allowPrivateNetworks);
  let discovered: oidc.Configuration;
  try {
    discovered = await oidc.discovery(issuer, registration.clientId, registration.clientSecret, undefined, {
      [oidc.customFetch]: fetch,
      timeout: TIMEOUT_SECONDS,
      ...(allowPrivateNetworks && issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
  } catch (error) {
    throw new ProviderProblem(discoveryFailure(error, issuer));
  }
  const metadata = discovered.serverMetadata();
  if (!metadata.authorization_endpoint)
    throw new ProviderProblem('the discovery document has no authorization_endpoint');
  if (!metadata.token_endpoint) throw new ProviderProblem('the discovery document has no token_endpoint');
  if (!metadata.jwks_uri) throw new ProviderProblem('the discovery document has no jwks_uri');
  if (metadata.response_types_supported && !metadata.response_types_supported.includes('code')) {
    throw new ProviderProblem('the provider does not support the authorization code flow (response type "code")');
  }
  if (metadata.code_challenge_methods_supported && !metadata.code_challenge_methods_supported.includes('S256')) {
    throw new ProviderProblem('the provider does not support PKCE with S256');
  }
  // Discovery defaults to client_secret_post; OpenID Discovery's default is client_secret_basic.
  const methods = metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  const authentication = methods.includes('client_secret_basic')
    ? oidc.ClientSecretBasic(registration.clientSecret)
    : methods.includes('client_secret_post')
      ? oidc.ClientSecretPost(registration.clientSecret)
      : null;
  if (!authentication) {
    throw new ProviderProblem('the token endpoint accepts neither client_secret_basic nor client_secret_post');
  }
  const config = new oidc.Configuration(metadata, registration.clientId, registration.clientSecret, authentication);
  config[oidc.customFetch] = fetch;
  config.timeout = TIMEOUT_SECONDS;
  if (allowPrivateNetworks && issuer.protocol === 'http:') oidc.allowInsecureRequests(config);
  return config;
}

function discoveryFailure(error: unknown, issuer: URL): string {
  const cause = rootCause(error);
  if (cause instanceof UnsafeUrlError) return `the issuer's address is refused: ${cause.message}`;
  if (cause instanceof ResponseTooLargeError) return `the discovery document is too large (${cause.message})`;
  const code = (error as { code?: unknown }).code;
  if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
    return `the discovery document's issuer does not match ${issuer.href.replace(/\/$/, '')} exactly (issuer mismatch)`;
  }
  if (code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') {
    return 'the discovery document could not be fetched: the issuer did not answer 200 at /.well-known/openid-configuration';
  }
  if (code === 'OAUTH_RESPONSE_IS_NOT_JSON' || code === 'OAUTH_PARSE_ERROR' || code === 'OAUTH_INVALID_RESPONSE') {
    return 'the discovery document is not a valid JSON object';
  }
  if (cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError')) {
    return `the issuer did not answer within ${TIMEOUT_SECONDS} seconds`;
  }
  const network = (cause as NodeJS.ErrnoException | null)?.code;
  if (network === 'ECONNREFUSED') return 'the issuer refused the connection';
  if (network === 'ENOTFOUND' || network === 'EAI_AGAIN') return "the issuer's host could not be resolved";
  return `the discovery document could not be used: ${error instanceof Error ? error.message : String(error)}`;
}

function rootCause(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause !== undefined; depth++) {
    current = current.cause;
  }
  return current;
}
