import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a connection accepted but not yet read may take to deliver its first request. */
const FIRST_REQUEST_GRACE_MS = 1_000;

/**
 * Lets a stopping server shed its keep-alive connections instead of serving them until they go
 * quiet (a busy client or a proxy's pooled connection never does): once `drain()` is called,
 * every answer not yet started, in flight or arriving later on an open connection, carries
 * `Connection: close`, so Node closes its connection after it; connections idle at that moment
 * are closed at once. In-flight requests finish with their real answers.
 *
 * A connection accepted but whose first request the server has not read yet (a busy event loop
 * reads it a little later) is not idle but in flight: Node's `closeIdleConnections`, which
 * `server.close()` also calls, would reset it. `drain()` resolves once every such connection has
 * delivered its request (or closed), at most FIRST_REQUEST_GRACE_MS after the signal, so the
 * caller closes the server only then.
 */
export function connectionDraining(server: Server): { drain(): Promise<void> } {
  const inFlight = new Set<ServerResponse>();
  const unread = new Set<Socket>();
  let draining = false;
  let settled: (() => void) | null = null;
  const forget = (socket: Socket) => {
    unread.delete(socket);
    if (settled && unread.size === 0) settled();
  };
  const closeAfter = (response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
  };
  server.on('connection', (socket: Socket) => {
    unread.add(socket);
    socket.once('close', () => forget(socket));
  });
  // Before the application's own listener, so the header is set before anything is written.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    forget(request.socket);
    if (draining) {
      closeAfter(response);
      return;
    }
    inFlight.add(response);
    response.once('close', () => {
      inFlight.delete(response);
      // An answer already under way when draining began went out keep-alive: its connection
      // is idle now, so close it rather than wait for the keep-alive timeout.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    async drain() {
      if (draining) return;
      draining = true;
      for (const response of inFlight) closeAfter(response);
      if (unread.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, FIRST_REQUEST_GRACE_MS);
          timer.unref();
          settled = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        settled = null;
      }
      server.closeIdleConnections();
    },
  };
}
