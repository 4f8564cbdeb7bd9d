import { describe, expect, it } from '@jest/globals';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { composeMiddleware, underPath } from './compose-middleware.js';

const request = (path = '/api/v1/flags') => ({ path }) as Request;
const response = {} as Response;

function run(handler: RequestHandler, req = request()): Promise<unknown> {
  return new Promise((resolve) => {
    void handler(req, response, ((error?: unknown) => resolve(error ?? 'done')) as NextFunction);
  });
}

describe('composeMiddleware', () => {
  it('runs every step in order, then continues', async () => {
    const seen: string[] = [];
    const step =
      (name: string): RequestHandler =>
      (_req, _res, next) => {
        seen.push(name);
        next();
      };
    expect(await run(composeMiddleware([step('a'), step('b'), step('c')]))).toBe('done');
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('stops at the first error passed to next and hands it on', async () => {
    const failure = new Error('bad body');
    const seen: string[] = [];
    const handler = composeMiddleware([
      (_req, _res, next) => next(failure),
      (_req, _res, next) => {
        seen.push('after');
        next();
      },
    ]);
    expect(await run(handler)).toBe(failure);
    expect(seen).toEqual([]);
  });

  it('hands on an error a step throws', async () => {
    const failure = new Error('thrown');
    const handler = composeMiddleware([
      () => {
        throw failure;
      },
    ]);
    expect(await run(handler)).toBe(failure);
  });

  it('lets a step answer without calling next', async () => {
    let answered = false;
    const handler = composeMiddleware([
      () => {
        answered = true;
      },
    ]);
    const outcome = await Promise.race([
      run(handler),
      new Promise((resolve) => setTimeout(() => resolve('pending'), 20)),
    ]);
    expect([answered, outcome]).toEqual([true, 'pending']);
  });

  it('continues a step that calls next later', async () => {
    const handler = composeMiddleware([
      (_req, _res, next) => setTimeout(() => next(), 1),
      (_req, _res, next) => next(),
    ]);
    expect(await run(handler)).toBe('done');
  });
});

describe('underPath', () => {
  const mark: RequestHandler = (req, _res, next) => {
    (req as Request & { marked?: boolean }).marked = true;
    next();
  };

  it.each([
    ['/device', true],
    ['/device/login', true],
    ['/devices', false],
    ['/api/v1/device', false],
  ])('%s is under /device: %s', async (path, expected) => {
    const req = request(path) as Request & { marked?: boolean };
    await run(underPath('/device', mark), req);
    expect(Boolean(req.marked)).toBe(expected);
  });
});
