import { describe, expect, it } from '@jest/globals';
import { isConcurrentChange } from './concurrent-change.js';

/** The shape of pg's errors (and TypeORM's QueryFailedError, which copies their fields). */
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('isConcurrentChange', () => {
  it('names the failures a concurrent transaction causes', () => {
    expect(isConcurrentChange(pgError('40001', 'could not serialize access due to concurrent update'))).toBe(true);
    expect(isConcurrentChange(pgError('40P01', 'deadlock detected'))).toBe(true);
    expect(
      isConcurrentChange(
        pgError(
          '23503',
          'insert or update on table "android_identities" violates foreign key constraint "android_identities_app_id_fkey"',
        ),
      ),
    ).toBe(true);
  });

  it('leaves every other failure a 500', () => {
    expect(
      isConcurrentChange(
        pgError('23503', 'update or delete on table "apps" violates foreign key constraint "x" on table "y"'),
      ),
    ).toBe(false);
    expect(isConcurrentChange(pgError('23505', 'duplicate key value violates unique constraint'))).toBe(false);
    expect(isConcurrentChange(pgError('42P01', 'relation "nope" does not exist'))).toBe(false);
    expect(isConcurrentChange(new Error('boom'))).toBe(false);
    expect(isConcurrentChange(null)).toBe(false);
    expect(isConcurrentChange('40001')).toBe(false);
  });
});
