import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** The pg pool behind TypeORM's PostgreSQL driver, as its own counters say. */
export interface PoolStats {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options?: { readonly max?: number };
}

/** The connection pool's figures, for the metrics' gauges (read on scrape only). */
@Injectable()
export class DatabasePool {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The pool's counters, or undefined before the driver has one. */
  stats(): PoolStats | undefined {
    return (this.dataSource.driver as unknown as { master?: PoolStats }).master;
  }
}
