import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Lets a stopping server shed its keep-alive connections instead of serving them until they go
 * quiet (a busy client or a proxy's pooled connection never does): once `drain()` is called,
 * every answer not yet started, in flight or arriving later on an open connection, carries
 * `Connection: close`, so Node closes its connection after it; connections idle at that moment
 * are closed at once. In-flight requests finish with their real answers.
 */
export function connectionDraining(server: Server): { drain(): void } {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  const closeAfter = (response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
  };
  // Before the application's own listener, so the header is set before anything is written.
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
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
    drain() {
      if (draining) return;
      draining = true;
      for (const response of inFlight) closeAfter(response);
      server.closeIdleConnections();
    },
  };
}
