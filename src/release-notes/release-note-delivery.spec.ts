import { describe, expect, it } from '@jest/globals';
import { deliverableNotes, versionKey } from './release-note-delivery.js';

const notes = ['1.0.0', '1.1.0', '2.0.0-beta.1', '2.0.0', '2.0.1', '10.0'].map((version) => ({ version }));
const versions = (installed: string, current: string) =>
  deliverableNotes(notes, installed, current).map((n) => n.version);

describe('deliverableNotes', () => {
  it.each([
    ['1.0.0', '1.0.0', []],
    ['2.0.0', '2.0.0', []],
    ['1.0.0', '1.1.0', ['1.1.0']],
    ['1.0', '2.0', ['2.0.0', '2.0.0-beta.1', '1.1.0']],
    ['1.1.0', '2.0.0-beta.1', ['2.0.0-beta.1']],
    ['2.0.0-beta.1', '2.0.0', ['2.0.0']],
    ['1.9', '2.0.0-alpha', []],
    ['2.0.1', '1.0.0', []],
    ['2.0.1', '9.9.9', []],
    ['9', '10', ['10.0']],
    ['0.9', '1.0.0+77', ['1.0.0']],
  ])('installed %s, current %s: %j', (installed, current, expected) => {
    expect(versions(installed, current)).toEqual(expected);
  });

  it('shows nothing when a version does not parse', () => {
    expect(versions('latest', '2.0.0')).toEqual([]);
  });
});

describe('versionKey', () => {
  it('is the same for every spelling of one version', () => {
    expect(versionKey('1.0')).toBe('1.0.0.0');
    expect(versionKey('v1.0.0+45')).toBe('1.0.0.0');
    expect(versionKey('2.1.3-beta.02')).toBe('2.1.3.0-beta.2');
    expect(versionKey('2.1.3-Beta')).not.toBe(versionKey('2.1.3-beta.0'));
    expect(versionKey('not a version')).toBeNull();
  });
});
