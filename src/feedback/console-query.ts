import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** Page size of the feedback and support lists (the release notes use the same bounds). */
export const DEFAULT_PER = 20;
export const MAX_PER = 100;

/** `page` (from 1) and `per` (1-100, default 20) of a paginated list. */
export class PageQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'page must be an integer' })
  @Min(1, { message: 'page must be 1 or more' })
  @Max(1_000_000, { message: 'page must be at most 1000000' })
  page: number = 1;

  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'per must be an integer' })
  @Min(1, { message: `per must be from 1 to ${MAX_PER}` })
  @Max(MAX_PER, { message: `per must be from 1 to ${MAX_PER}` })
  per: number = DEFAULT_PER;
}
