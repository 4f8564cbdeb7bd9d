import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work.js';

/**
 * Savepoints of the open unit of work, for the flag changes that try a write and keep or undo it
 * as one step of a larger change (the gate of protected environments checks a write and undoes
 * it; the schedule job settles a schedule whose change may fail). Only inside `uow.run`.
 */
@Injectable()
export class SavepointsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Runs `work` and undoes everything it wrote, whether it succeeded or threw (then rethrows). */
  async undone<T>(work: () => Promise<T>): Promise<T> {
    const manager = this.uow.manager();
    await manager.query('SAVEPOINT undone_write');
    try {
      return await work();
    } finally {
      await manager.query('ROLLBACK TO SAVEPOINT undone_write');
    }
  }

  /** Runs `work` and keeps what it wrote; when it throws, undoes its writes and rethrows. */
  async attempt<T>(work: () => Promise<T>): Promise<T> {
    const manager = this.uow.manager();
    await manager.query('SAVEPOINT attempted_write');
    let result: T;
    try {
      result = await work();
    } catch (error) {
      await manager.query('ROLLBACK TO SAVEPOINT attempted_write');
      throw error;
    }
    await manager.query('RELEASE SAVEPOINT attempted_write');
    return result;
  }
}
