import { EventEmitter } from 'node:events';

/**
 * The ioredis client the Redis probe makes, in memory: how it was configured, its connection state
 * ('wait' until connected, as with `lazyConnect`), and how Redis answers a PING: `answer` is the
 * reply ('PONG' when well), or 'refused' for a Redis nothing listens for.
 */
export class FakeRedisClient extends EventEmitter {
  status = 'wait';
  answer: string = 'PONG';
  connects = 0;
  disconnected = false;

  constructor(
    readonly url: string,
    readonly options: Record<string, unknown>,
  ) {
    super();
  }

  connect(): Promise<void> {
    this.connects++;
    if (this.answer === 'refused') {
      this.status = 'reconnecting';
      return Promise.reject(new Error(`connect ECONNREFUSED ${this.url}`));
    }
    this.status = 'ready';
    return Promise.resolve();
  }

  ping(): Promise<string> {
    if (this.answer === 'refused') return Promise.reject(new Error('Connection is closed.'));
    return Promise.resolve(this.answer);
  }

  disconnect(): void {
    this.disconnected = true;
    this.status = 'end';
  }
}
