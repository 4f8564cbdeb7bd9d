import { describe, expect, it } from '@jest/globals';
import { parseRevocation } from './deny-set.js';

describe('token revocation messages', () => {
  it('reads what the service announces', () => {
    expect(parseRevocation('{"kind":"device","appIds":["a","b"],"keyId":"k","blocked":true}')).toEqual({
      kind: 'device',
      appIds: ['a', 'b'],
      keyId: 'k',
      blocked: true,
    });
    expect(parseRevocation('{"kind":"app","appId":"a","state":"deleted"}')).toEqual({
      kind: 'app',
      appId: 'a',
      state: 'deleted',
    });
  });

  it('ignores anything else on the channel', () => {
    for (const payload of [
      'not json',
      'null',
      '"app"',
      '{"kind":"app","appId":"a","state":"paused"}',
      '{"kind":"app","appId":1,"state":"deleted"}',
      '{"kind":"device","appIds":"a","keyId":"k","blocked":true}',
      '{"kind":"device","appIds":[1],"keyId":"k","blocked":true}',
      '{"kind":"device","appIds":["a"],"keyId":"k","blocked":"yes"}',
      '{"kind":"organization","organizationId":"o"}',
    ]) {
      expect(parseRevocation(payload)).toBeNull();
    }
  });
});
