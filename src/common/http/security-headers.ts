import helmet from 'helmet';

/**
 * Security headers on every response, through `helmet`: `X-Content-Type-Options: nosniff`,
 * `X-Frame-Options: DENY` (nothing of this service belongs in a frame), `Referrer-Policy:
 * no-referrer`, HSTS for a year when the public URL is https, and the cross-origin isolation
 * headers that do not break the OpenAPI viewer. The JSON API has no use for a Content-Security-
 * Policy; the pages that render HTML set their own (the device-login page, a strict nonce policy).
 * Helmet's headers for legacy browsers and plug-ins are off (docs/decisions/0057-the-per-request-pipeline.md): no current
 * browser reads `X-XSS-Protection`, `X-Download-Options` (Internet Explorer 8) or
 * `X-Permitted-Cross-Domain-Policies` (Flash, Acrobat), and `X-DNS-Prefetch-Control` and
 * `Origin-Agent-Cluster` are hints for HTML documents; each costs every answer a header.
 */
export function securityHeaders(config: { baseUrl: string }) {
  const https = config.baseUrl.startsWith('https:');
  return helmet({
    contentSecurityPolicy: false,
    crossOriginEmbedderPolicy: false,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    xXssProtection: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xDnsPrefetchControl: false,
    originAgentCluster: false,
  });
}
