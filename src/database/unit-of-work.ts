import { AsyncLocalStorage } from 'node:async_hooks';
import { Global, Injectable, Module } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

/** One open transaction: its manager and what runs once it has committed. */
interface Work {
  readonly manager: EntityManager;
  readonly afterCommit: (() => void | Promise<void>)[];
}

/**
 * The unit of work (decision 0070). `run` opens one transaction and every repository called
 * inside it, at any depth of the same asynchronous call chain, runs its statements in that
 * transaction: services never see or pass an `EntityManager`, so a call cannot silently run
 * outside the transaction its caller opened. Audit entries, outbox rows and domain events are
 * written by repositories too, so they commit with the change or not at all.
 *
 * A `run` inside a `run` joins the outer transaction. Work that must not be part of it (sending
 * an e-mail, waking a dispatcher) is handed to `afterCommit`, which runs it after the commit,
 * outside any unit of work, and never if the transaction rolls back.
 */
@Injectable()
export class UnitOfWork {
  private readonly current = new AsyncLocalStorage<Work>();
  /**
   * The connection `onConnection` binds: units of work and statements of that call chain run on it
   * while `held`; a task the chain started that outlives it (a dispatcher woken after a commit)
   * falls back to the pool, never to a connection given back.
   */
  private readonly connection = new AsyncLocalStorage<{ manager: EntityManager; held: boolean }>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** `work` in one transaction (joined when one is already open); its result after commit. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.current.getStore()) return work();
    const afterCommit: Work['afterCommit'] = [];
    const base = this.heldConnection() ?? this.dataSource.manager;
    const result = await base.transaction((manager) => this.current.run({ manager, afterCommit }, work));
    await this.current.exit(async () => {
      for (const task of afterCommit) await task();
    });
    return result;
  }

  /**
   * `task` after the current unit of work commits, outside it; at once when none is open. A task
   * that throws fails the caller after the commit: tasks that may fail guard themselves.
   */
  async afterCommit(task: () => void | Promise<void>): Promise<void> {
    const open = this.current.getStore();
    if (open) open.afterCommit.push(task);
    else await this.current.exit(task);
  }

  /** Whether a unit of work is open in this call chain. */
  get active(): boolean {
    return this.current.getStore() !== undefined;
  }

  /**
   * What a repository runs its statements on: the open transaction's manager, else the data
   * source's (each statement commits on its own). For repositories only (`npm run lint` checks).
   */
  manager(): EntityManager {
    return this.current.getStore()?.manager ?? this.heldConnection() ?? this.dataSource.manager;
  }

  /** `work` outside any open unit of work (a read that must see committed data only, a background task). */
  outside<T>(work: () => T): T {
    return this.current.exit(() => this.connection.exit(work));
  }

  /**
   * `work` with `manager`'s connection (a job's advisory-lock connection) under its units of work
   * and statements, so a job holds one connection of the pool, not two. Its units of work must run
   * one after another: one connection holds one transaction at a time.
   */
  async onConnection<T>(manager: EntityManager, work: () => Promise<T>): Promise<T> {
    const binding = { manager, held: true };
    try {
      return await this.connection.run(binding, work);
    } finally {
      binding.held = false;
    }
  }

  private heldConnection(): EntityManager | undefined {
    const binding = this.connection.getStore();
    return binding?.held ? binding.manager : undefined;
  }
}

/** Provides the unit of work to every feature. */
@Global()
@Module({ providers: [UnitOfWork], exports: [UnitOfWork] })
export class UnitOfWorkModule {}
