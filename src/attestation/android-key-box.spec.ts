import { describe, expect, it } from '@jest/globals';
import { AndroidKeyBox } from './android-key-box.js';

const MASTER = 'm'.repeat(48);

describe('AndroidKeyBox', () => {
  it('opens what it sealed for the same app, and nothing else', () => {
    const box = new AndroidKeyBox(MASTER);
    const sealed = box.seal('secret key', 'app-1');
    expect(sealed).not.toContain('secret');
    expect(box.open(sealed, 'app-1')).toBe('secret key');
    expect(box.open(sealed, 'app-2')).toBeNull();
    expect(new AndroidKeyBox('o'.repeat(48)).open(sealed, 'app-1')).toBeNull();
    const [version, iv, body] = sealed.split('.');
    const flipped = `${body.slice(0, 2)}${body[2] === 'A' ? 'B' : 'A'}${body.slice(3)}`;
    expect(box.open(`${version}.${iv}.${flipped}`, 'app-1')).toBeNull();
    expect(box.open('garbage', 'app-1')).toBeNull();
  });

  it('refuses a short master secret', () => {
    expect(() => new AndroidKeyBox('short')).toThrow('at least 32 characters');
  });
});
