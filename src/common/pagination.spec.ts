import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { pageEnvelope, pageWindow, PageQuery, PerPageQuery } from './pagination.js';

class AuditQuery extends PageQuery {
  override per = 50;
}

async function messages(type: new () => object, query: Record<string, string>): Promise<string[]> {
  const errors = await validate(plainToInstance(type, query));
  return errors.flatMap((error) => Object.values(error.constraints ?? {}));
}

describe('pagination', () => {
  it('defaults to the first page of 20, or of the default a route redeclares', () => {
    expect(plainToInstance(PageQuery, {})).toMatchObject({ page: 1, per: 20 });
    expect(plainToInstance(AuditQuery, {})).toMatchObject({ page: 1, per: 50 });
    expect(plainToInstance(PerPageQuery, { page: '3', perPage: '7' })).toMatchObject({ page: 3, perPage: 7 });
  });

  it('refuses sizes outside 1-100 and pages below 1, naming the parameter the route documents', async () => {
    expect(await messages(PageQuery, { per: '101' })).toEqual(['per must be from 1 to 100']);
    expect(await messages(AuditQuery, { per: '0' })).toEqual(['per must be from 1 to 100']);
    expect(await messages(PerPageQuery, { perPage: '1.5' })).toEqual(['perPage must be an integer']);
    expect(await messages(PageQuery, { page: '0' })).toEqual(['page must be 1 or more']);
    expect(await messages(PageQuery, { page: '1000001' })).toEqual(['page must be at most 1000000']);
    expect(await messages(PageQuery, { page: '2', per: '100' })).toEqual([]);
  });

  it('turns a page into limit and offset', () => {
    expect(pageWindow(plainToInstance(PageQuery, { page: '3', per: '25' }))).toEqual({ limit: 25, offset: 50 });
    expect(pageWindow(plainToInstance(PerPageQuery, { page: '2' }))).toEqual({ limit: 20, offset: 20 });
  });

  it('builds each documented envelope', () => {
    const query = plainToInstance(PageQuery, { page: '2', per: '2' });
    expect(pageEnvelope('metadata', query, ['c', 'd'], 5)).toEqual({
      items: ['c', 'd'],
      metadata: { page: 2, per: 2, total: 5 },
    });
    expect(pageEnvelope('flat', query, ['c', 'd'], 5)).toEqual({ items: ['c', 'd'], page: 2, per: 2, total: 5 });
    const events = plainToInstance(PerPageQuery, { page: '1', perPage: '2' });
    expect(pageEnvelope('data-meta', events, ['a', 'b'], 5)).toEqual({
      data: ['a', 'b'],
      meta: { page: 1, perPage: 2, total: 5, totalPages: 3 },
    });
  });
});
