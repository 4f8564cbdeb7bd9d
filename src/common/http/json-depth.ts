import type { IncomingMessage } from 'node:http';

/** Deepest nesting of arrays and objects a JSON body may have; no request of the interface needs more than a few levels. */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The nesting depth of a JSON text, read in one pass over its bytes (strings skipped), so a body
 * nested 100,000 levels deep is refused before anything recursive (the parser's consumers, the
 * validation, canonical JSON) ever sees it. Stops counting once `limit` is passed.
 */
export function jsonDepthExceeds(bytes: Uint8Array, limit: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The error the JSON body parser's `verify` throws for a body nested too deep (answered 400). */
export class JsonTooDeepError extends Error {
  readonly type = 'entity.too.deep';
  readonly status = 400;
  readonly expose = true;
  constructor() {
    super(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
}

/**
 * body-parser's `verify` for JSON: keeps the exact bytes as `request.rawBody` (the Stripe webhook
 * signature covers them) and refuses nesting beyond MAX_JSON_DEPTH before the body is parsed.
 */
export function verifyJsonBody(
  request: IncomingMessage & { rawBody?: Buffer },
  _response: unknown,
  body: Buffer,
): void {
  request.rawBody = body;
  if (jsonDepthExceeds(body)) throw new JsonTooDeepError();
}
