/**
 * The claims of a device token the service sets itself: the registered ones (`@nestjs/jwt` writes
 * them), the tenant's ids, the environment and risk, the markers of debug and limited-use tokens,
 * the app metadata a tenant may ask for, and `subscription` (the interface document's). A custom
 * claim can never take one of these names: the claims feature refuses them as keys (in any case),
 * and the token service leaves them out of the custom claims it merges.
 */
export const SERVICE_SET_CLAIMS: ReadonlySet<string> = new Set([
  'sub',
  'iss',
  'aud',
  'iat',
  'exp',
  'nbf',
  'jti',
  'subscription',
  'org_id',
  'app_id',
  'env',
  'risk_score',
  'bundle_id',
  'team_id',
  'app_name',
  'debug',
  'limited_use',
]);
