import type { Request } from 'express';

/** The credential of `Authorization: Bearer …`, or of `X-API-Key` (server-to-server analytics). */
export function bearerToken(request: Request): string | null {
  const apiKeyHeader = request.headers['x-api-key'];
  if (typeof apiKeyHeader === 'string' && apiKeyHeader) return apiKeyHeader;
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1] : null;
}
