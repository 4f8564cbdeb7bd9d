import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work.js';

/** The health check's probe of the database. */
@Injectable()
export class HealthRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Resolves once the database answers a trivial statement; rejects when it cannot. */
  async ping(): Promise<void> {
    await this.uow.manager().query('SELECT 1');
  }
}
