// The deny set without I/O: what a read of changes and each announced revocation do to it, and
// how long a revoked debug token is held.
import { describe, expect, it } from '@jest/globals';
import { DenySetState, REVOKED_DEBUG_TOKEN_HELD_MS, type DenySetRead } from './deny-set-state.js';

const TOKEN = '00000000-0000-4000-8000-000000000001';
const NOW = Date.UTC(2026, 10, 26);
const HOUR_MS = 3_600_000;

function read(parts: Partial<DenySetRead> & { cursor?: string } = {}): DenySetRead {
  const cursor = parts.cursor ?? '100';
  return {
    devices: parts.devices ?? { cursor, rows: [] },
    debugTokens: parts.debugTokens ?? { cursor, rows: [] },
    inactiveApps: parts.inactiveApps ?? [],
  };
}

const blockedMessage = 'The attestation token belongs to a blocked device';

describe('the deny set state', () => {
  it('applies a read of changes on top of what it holds, and moves each cursor on only then', () => {
    const state = new DenySetState();
    expect(state.cursors()).toEqual({ devices: null, debugTokens: null });
    state.applyRead(
      read({
        devices: {
          cursor: '7',
          rows: [
            { appId: 'a', keyId: 'k1', blocked: true },
            { appId: 'a', keyId: 'k2', blocked: true },
          ],
        },
        debugTokens: { cursor: '8', rows: [] },
      }),
      NOW,
    );
    expect(state.cursors()).toEqual({ devices: '7', debugTokens: '8' });
    // A later read brings only what changed: k2 unblocked; k1, not in it, stays blocked.
    state.applyRead(read({ devices: { cursor: '9', rows: [{ appId: 'a', keyId: 'k2', blocked: false }] } }), NOW);
    expect(state.refusal('a', 'k1', NOW)?.message).toBe(blockedMessage);
    expect(state.refusal('a', 'k2', NOW)).toBeNull();
    // The same change read twice (a transaction still running at the previous read) changes nothing.
    state.applyRead(read({ devices: { cursor: '9', rows: [{ appId: 'a', keyId: 'k2', blocked: false }] } }), NOW);
    expect(state.sizes().blockedDevices).toBe(1);
    expect(state.cursors()).toEqual({ devices: '9', debugTokens: '100' });
  });

  it('replaces inactive apps whole with each read, and announcements change them between reads', () => {
    const state = new DenySetState();
    state.applyRead(read({ inactiveApps: ['a'] }), NOW);
    state.apply({ kind: 'app', appId: 'b', state: 'inactive' }, NOW);
    expect(state.refusal('b', 'k', NOW)?.message).toBe('The attestation token belongs to a deactivated app');
    state.applyRead(read({ inactiveApps: ['b'] }), NOW);
    expect(state.refusal('a', 'k', NOW)).toBeNull();
    expect(state.refusal('b', 'k', NOW)).not.toBeNull();
  });

  it('holds a revoked debug token until the last device token it can have minted expired, then lets it go', () => {
    const state = new DenySetState();
    state.applyRead(
      read({
        debugTokens: {
          cursor: '5',
          rows: [
            { appId: 'a', tokenId: TOKEN, untilMs: NOW + HOUR_MS },
            // Already past its time: not taken in.
            { appId: 'a', tokenId: 'old', untilMs: NOW - 1 },
          ],
        },
      }),
      NOW,
    );
    expect(state.sizes().revokedDebugTokens).toBe(1);
    expect(state.refusal('a', `debug:${TOKEN}:sim`, NOW)?.message).toBe(
      'The attestation token was minted from a revoked debug token',
    );
    // Another app's token of the same id is not refused.
    expect(state.refusal('b', `debug:${TOKEN}`, NOW)).toBeNull();
    expect(state.refusal('a', `debug:${TOKEN}`, NOW + HOUR_MS)).toBeNull();
    expect(state.sizes().revokedDebugTokens).toBe(0);
  });

  it('holds an announced debug token for the longest token lifetime until a read brings its own time', () => {
    const state = new DenySetState();
    state.apply({ kind: 'debugToken', appId: 'a', tokenId: TOKEN }, NOW);
    expect(state.holdsDebugToken('a', TOKEN, NOW + REVOKED_DEBUG_TOKEN_HELD_MS - 1)).toBe(true);
    state.applyRead(
      read({ debugTokens: { cursor: '3', rows: [{ appId: 'a', tokenId: TOKEN, untilMs: NOW + HOUR_MS }] } }),
      NOW,
    );
    expect(state.holdsDebugToken('a', TOKEN, NOW + HOUR_MS - 1)).toBe(true);
    expect(state.holdsDebugToken('a', TOKEN, NOW + HOUR_MS)).toBe(false);
    // An announcement heard again after the read does not stretch the row's time.
    state.applyRead(
      read({ debugTokens: { cursor: '4', rows: [{ appId: 'a', tokenId: TOKEN, untilMs: NOW + HOUR_MS }] } }),
      NOW,
    );
    state.apply({ kind: 'debugToken', appId: 'a', tokenId: TOKEN }, NOW);
    expect(state.holdsDebugToken('a', TOKEN, NOW + HOUR_MS)).toBe(false);
  });

  it('sweeps entries past their time out at most hourly, without a lookup', () => {
    const state = new DenySetState();
    state.applyRead(
      read({ debugTokens: { cursor: '1', rows: [{ appId: 'a', tokenId: TOKEN, untilMs: NOW + 1000 }] } }),
      NOW,
    );
    state.apply({ kind: 'app', appId: 'gone', state: 'deleted' }, NOW - REVOKED_DEBUG_TOKEN_HELD_MS);
    state.sweep(NOW + 2000);
    // Swept at the read a moment ago: not yet again.
    expect(state.sizes()).toMatchObject({ revokedDebugTokens: 1, deletedApps: 1 });
    state.sweep(NOW + HOUR_MS);
    expect(state.sizes()).toMatchObject({ revokedDebugTokens: 0, deletedApps: 0 });
  });
});
