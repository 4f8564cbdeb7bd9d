import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { createLogger } from './logger.js';
import { requestContext } from '../http/request-context.js';
import { requestLogger } from './request-logger.js';
import { trustOrganizationId } from '../access/tenant-id.js';

function loggedApp(logLevel: 'info' | 'warn') {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const app = express();
  app.use(requestContext('commit-1', [requestLogger(createLogger({ logLevel }, sink))]));
  app.get('/api/v1/apps/:appId', (req, res) => {
    req.auth = { caller: {} as never, organizationId: trustOrganizationId('org-1'), ipAddress: null };
    res.json({ ok: true });
  });
  app.get('/boom', (_req, res) => {
    res.status(503).json({});
  });
  return { app, lines };
}

describe('request log', () => {
  it('writes one info line per successful request with the route template, organization and request id', async () => {
    const { app, lines } = loggedApp('info');
    await request(app).get('/api/v1/apps/5f0c1d9e-secret-id').set('X-Request-ID', 'req-1').expect(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      requestId: 'req-1',
      method: 'GET',
      route: '/api/v1/apps/:appId',
      status: 200,
      organizationId: 'org-1',
    });
    expect(typeof lines[0].durationMs).toBe('number');
    expect(JSON.stringify(lines[0])).not.toContain('5f0c1d9e');
  });

  it('names unmatched paths by a fixed label and logs server errors at error', async () => {
    const { app, lines } = loggedApp('info');
    await request(app).get('/no/such/path').expect(404);
    await request(app).get('/boom').expect(503);
    expect(lines.map((line) => [line.route, line.status, line.level])).toEqual([
      ['unmatched', 404, 30],
      ['/boom', 503, 50],
    ]);
    expect(lines[0].organizationId).toBeNull();
  });

  it('writes nothing below the configured level', async () => {
    const { app, lines } = loggedApp('warn');
    await request(app).get('/api/v1/apps/x').expect(200);
    expect(lines).toEqual([]);
  });
});
