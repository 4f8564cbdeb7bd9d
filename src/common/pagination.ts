// Page-numbered lists: the query DTOs every paginated route extends, and the one function that
// turns such a query and its rows into the envelope the route documents. The interface document
// names the page size `per` on most routes and `perPage` on the analytics events, and gives three
// envelopes (pagination notes of the document): each route keeps its own names.
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** The interface document's page-size ceiling for every listing. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE = 1_000_000;

/** An optional whole number from 1 to `max`, with the messages the routes have always given. */
function WholeNumber(name: string, max: number, messages: { min: string; max: string }): PropertyDecorator {
  const decorators = [
    IsOptional(),
    Type(() => Number),
    IsInt({ message: `${name} must be an integer` }),
    Min(1, { message: messages.min }),
    Max(max, { message: messages.max }),
  ];
  return (target, property) => decorators.forEach((decorate) => decorate(target, property));
}

/** The page size under `name`: 1 to 100. */
function PageSize(name: string): PropertyDecorator {
  const range = `${name} must be from 1 to ${MAX_PAGE_SIZE}`;
  return WholeNumber(name, MAX_PAGE_SIZE, { min: range, max: range });
}

class PageNumberQuery {
  @WholeNumber('page', MAX_PAGE, { min: 'page must be 1 or more', max: `page must be at most ${MAX_PAGE}` })
  page: number = 1;
}

/**
 * `page` (from 1) and `per` (1-100, default 20). A route with another default redeclares `per`
 * with it (`override per = 50`); the validation stays the one declared here.
 */
export class PageQuery extends PageNumberQuery {
  @PageSize('per')
  per: number = DEFAULT_PAGE_SIZE;
}

/** `page` (from 1) and `perPage` (1-100, default 20), for the routes documented with `perPage`. */
export class PerPageQuery extends PageNumberQuery {
  @PageSize('perPage')
  perPage: number = DEFAULT_PAGE_SIZE;
}

/** `items` and `metadata` (`page`, `per`, `total`). */
export interface MetadataPage<T> {
  items: T[];
  metadata: { page: number; per: number; total: number };
}

/** `items` with flat `page`, `per`, `total` (the /org console lists). */
export interface FlatPage<T> {
  items: T[];
  page: number;
  per: number;
  total: number;
}

/** `data` and `meta` (`page`, `perPage`, `total`, `totalPages`). */
export interface DataMetaPage<T> {
  data: T[];
  meta: { page: number; perPage: number; total: number; totalPages: number };
}

/** The rows a page query asks for: `LIMIT limit OFFSET offset`, or TypeORM's `take` and `skip`. */
export function pageWindow(query: PageQuery | PerPageQuery): { limit: number; offset: number } {
  const size = 'perPage' in query ? query.perPage : query.per;
  return { limit: size, offset: (query.page - 1) * size };
}

/** The envelope of one page, in the form the route documents, from its query, rows and total count. */
export function pageEnvelope<T>(form: 'metadata', query: PageQuery, items: T[], total: number): MetadataPage<T>;
export function pageEnvelope<T>(form: 'flat', query: PageQuery, items: T[], total: number): FlatPage<T>;
export function pageEnvelope<T>(form: 'data-meta', query: PerPageQuery, items: T[], total: number): DataMetaPage<T>;
export function pageEnvelope<T>(
  form: 'metadata' | 'flat' | 'data-meta',
  query: PageQuery | PerPageQuery,
  items: T[],
  total: number,
): MetadataPage<T> | FlatPage<T> | DataMetaPage<T> {
  if (form === 'data-meta') {
    const { page, perPage } = query as PerPageQuery;
    return { data: items, meta: { page, perPage, total, totalPages: Math.ceil(total / perPage) } };
  }
  const { page, per } = query as PageQuery;
  return form === 'flat' ? { items, page, per, total } : { items, metadata: { page, per, total } };
}
