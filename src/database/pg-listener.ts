import pg from 'pg';
import type { Logger } from 'pino';

export interface PgListenerOptions {
  readonly url: string | undefined;
  readonly channel: string;
  readonly logger: Logger;
  /** Each notification's payload, on every instance (this one included), after the commit. */
  readonly onMessage: (payload: string) => void;
  /** Back after a lost connection: notifications may have been missed meanwhile. */
  readonly onReconnect: () => void;
}

/**
 * One dedicated connection that LISTENs on a PostgreSQL channel: the fan-out between instances
 * (a change commits with `pg_notify(channel, payload)`). A lost connection is retried with
 * backoff until `close()`, and `onReconnect` lets the owner drop what it may have missed.
 */
export class PgListener {
  private client: pg.Client | null = null;
  private closing = false;

  constructor(private readonly options: PgListenerOptions) {}

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url });
    client.on('notification', (message) => {
      if (message.channel === this.options.channel && message.payload) this.options.onMessage(message.payload);
    });
    client.on('error', (error) => {
      this.options.logger.warn(
        { err: error, channel: this.options.channel },
        'listener lost its connection; reconnecting',
      );
      void this.reconnect();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
    } catch (error) {
      client.removeAllListeners('error');
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client?.end().catch(() => undefined);
  }

  private async reconnect(): Promise<void> {
    const old = this.client;
    this.client = null;
    await old?.end().catch(() => undefined);
    for (let attempt = 0; !this.closing; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** attempt)));
      if (this.closing) return;
      try {
        await this.start();
        this.options.onReconnect();
        return;
      } catch {
        // the database is still away; try again
      }
    }
  }
}
