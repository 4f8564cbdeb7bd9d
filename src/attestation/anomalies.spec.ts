import { describe, expect, it } from '@jest/globals';
import { anomaliesOf, FAILURE_BURST, isHighRisk } from './anomalies.js';

describe('attestation anomalies', () => {
  const quiet = { errorCode: 'invalid_signature', recentFailures: 1, keyInOtherApps: false };

  it('finds none in a lone failure of a key known to one app', () => {
    expect(anomaliesOf(quiet)).toEqual([]);
  });

  it('calls a counter that did not increase a counter regression', () => {
    expect(anomaliesOf({ ...quiet, errorCode: 'counter_not_increasing' }).map((a) => a.pattern)).toEqual([
      'counter_regression',
    ]);
  });

  it('announces a burst once, when the failures in the window reach the threshold', () => {
    const at = (recentFailures: number | null) =>
      anomaliesOf({ ...quiet, recentFailures }).filter((a) => a.pattern === 'failure_burst');
    expect(at(FAILURE_BURST.count - 1)).toEqual([]);
    expect(at(FAILURE_BURST.count)).toEqual([
      { pattern: 'failure_burst', detail: `${FAILURE_BURST.count} failed attempts within 10 minutes` },
    ]);
    expect(at(FAILURE_BURST.count + 1)).toEqual([]);
    expect(at(null)).toEqual([]);
  });

  it('names a key known to another app of the organization, after the other patterns', () => {
    expect(
      anomaliesOf({ errorCode: 'counter_not_increasing', recentFailures: 5, keyInOtherApps: true }).map(
        (a) => a.pattern,
      ),
    ).toEqual(['counter_regression', 'failure_burst', 'key_seen_in_multiple_apps']);
  });

  it('counts a score as high risk only above the threshold', () => {
    expect(isHighRisk(51, 50)).toBe(true);
    expect(isHighRisk(50, 50)).toBe(false);
    expect(isHighRisk(0, 0)).toBe(false);
  });
});
