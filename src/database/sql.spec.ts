import { describe, expect, it } from '@jest/globals';
import { preparedStatement, sqlIdentifier, sqlReference } from './sql.js';

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

describe('prepared statements', () => {
  it('gives one name one text: the same declaration twice is one statement, another text under it a programming error', () => {
    const first = preparedStatement('spec_probe', 'SELECT 1');
    expect(preparedStatement('spec_probe', 'SELECT 1')).toEqual(first);
    expect(() => preparedStatement('spec_probe', 'SELECT 2')).toThrow(
      'the prepared statement spec_probe has two texts',
    );
  });

  it.each(['', 'Upper', '1st', 'with space', 'x'.repeat(64), 'a;b'])('refuses the name %j', (name) => {
    expect(() => preparedStatement(name, 'SELECT 1')).toThrow('not a statement name');
  });
});
