import { describe, expect, it } from '@jest/globals';
import { sqlIdentifier, sqlReference } from './sql.js';

describe('what an owner splices into its SQL fragments', () => {
  it.each(['$1', '$12', 'a.organization_id', 'ev.organization_id', 'u.id'])('admits the reference %s', (reference) => {
    expect(sqlReference(reference)).toBe(reference);
  });

  it.each([
    "'7a1c0b52-0000-4000-8000-000000000000'",
    '7a1c0b52-0000-4000-8000-000000000000',
    '$0',
    'organization_id',
    'a.id; DROP TABLE apps',
    'a.id OR true',
    '',
  ])('refuses %j, which is no parameter or column reference', (reference) => {
    expect(() => sqlReference(reference)).toThrow('not a parameter or column reference');
  });

  it('admits plain aliases and refuses anything else', () => {
    expect(sqlIdentifier('o')).toBe('o');
    expect(sqlIdentifier('member_1')).toBe('member_1');
    expect(() => sqlIdentifier('o) x ON true; --')).toThrow('not an SQL identifier');
    expect(() => sqlIdentifier('O')).toThrow('not an SQL identifier');
  });
});
