import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { withAdvisoryLock } from '../../database/advisory-lock.js';
import { UnitOfWork } from '../../database/unit-of-work.js';

/** Advisory lock key of the SSO domain re-check (arbitrary; unique among the service's locks). */
const SSO_DOMAIN_RECHECK_LOCK = 727_131;

/**
 * The SSO domain re-check's advisory lock (decision 0070: the lock's dedicated connection is data
 * access), so the job runs on one instance at a time. The work itself runs its own units of work.
 */
@Injectable()
export class SsoDomainRecheckLock {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
  ) {}

  /** `work`'s result (run on the lock's connection), or null when another instance holds the lock. */
  async whileHeld<T>(work: () => Promise<T>): Promise<{ result: T } | null> {
    const outcome = await withAdvisoryLock(this.dataSource, SSO_DOMAIN_RECHECK_LOCK, (manager) =>
      this.uow.onConnection(manager, work),
    );
    return outcome.ran ? { result: outcome.result } : null;
  }
}
