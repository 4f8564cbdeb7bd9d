import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from '../../config/app-config.js';

/** What a logger needs of the configuration; an `AppConfig` will do. */
export interface LogSettings {
  readonly logLevel: LogLevel;
  readonly logFormat?: LogFormat;
}

/**
 * Structured JSON logs (or, with `LOG_FORMAT=pretty`, the same records as coloured lines through
 * pino-pretty, for development). Secrets never reach them: these paths are redacted wherever they
 * appear, and a failed query's parameters (password hashes, key hashes, webhook secrets) are left
 * out of logged errors. `destination` (stdout by default) lets tests read what would be written.
 */
export function createLogger(settings: LogSettings, destination?: DestinationStream): Logger {
  const options = {
    level: settings.logLevel,
    base: undefined,
    serializers: { err: withoutQueryParameters },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-api-key"]',
        'res.headers["set-cookie"]',
        '*.password',
        '*.token',
        '*.secret',
      ],
      censor: '[redacted]',
    },
  };
  if (destination) return pino(options, destination);
  if (settings.logFormat === 'pretty') {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } });
  }
  return pino(options);
}

/** TypeORM's QueryFailedError carries the statement's bound values: the query text is enough. */
function withoutQueryParameters(error: Error): Record<string, unknown> {
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  delete serialized.parameters;
  return serialized;
}

/** Nest's own messages (bootstrap, route mapping) go through the same JSON logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
