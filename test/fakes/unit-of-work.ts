import type { EntityManager } from 'typeorm';
import type { UnitOfWork } from '../../src/database/unit-of-work.js';

/**
 * The unit of work for services tested on in-memory fakes of their repositories: `run` runs the
 * work (the fakes keep their state in memory; a test that needs rollback asserts it on the real
 * database), `afterCommit` tasks run once the outermost `run` has returned, as after a commit;
 * `committed` counts the units of work that finished.
 */
export class FakeUnitOfWork implements Pick<UnitOfWork, 'run' | 'afterCommit' | 'active' | 'outside'> {
  committed = 0;
  private depth = 0;
  private pending: (() => void | Promise<void>)[] = [];

  async run<T>(work: () => Promise<T>): Promise<T> {
    this.depth++;
    try {
      const result = await work();
      if (this.depth === 1) {
        this.committed++;
        const tasks = this.pending;
        this.pending = [];
        for (const task of tasks) await task();
      }
      return result;
    } catch (error) {
      if (this.depth === 1) this.pending = [];
      throw error;
    } finally {
      this.depth--;
    }
  }

  async afterCommit(task: () => void | Promise<void>): Promise<void> {
    if (this.depth > 0) this.pending.push(task);
    else await task();
  }

  get active(): boolean {
    return this.depth > 0;
  }

  outside<T>(work: () => T): T {
    return work();
  }

  /** Repositories are faked, so nothing asks for a manager. */
  manager(): EntityManager {
    throw new Error('a service tested on fakes asked the unit of work for an EntityManager');
  }

  /** As the type services are given. */
  asUnitOfWork(): UnitOfWork {
    return this as unknown as UnitOfWork;
  }
}
