import type { EntityManager } from 'typeorm';
import { FakeUnitOfWork } from './unit-of-work.js';

/**
 * FakeUnitOfWork for services that still hand `uow.manager()` to another group's method across a
 * `// seam:` (decision 0070's conversion): the faked callee ignores it, so a placeholder is given.
 * Goes away with the seams.
 */
export class SeamUnitOfWork extends FakeUnitOfWork {
  override manager(): EntityManager {
    return {} as EntityManager;
  }
}
