import { describe, expect, it } from '@jest/globals';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import { MAX_CLAIM_VALUE_LENGTH } from './claim-types.js';
import type { DeviceContext, JsonValue } from './claim-types.js';
import {
  MAX_EXPRESSION_LENGTH,
  compileExpression,
  evaluateExpression,
  validateExpression,
} from './expression-language.js';

const NOW = Date.UTC(2025, 0, 1);

const device: DeviceContext = {
  keyId: 'key-1',
  deviceModel: 'iPhone15,2',
  osVersion: '17.4.1',
  appVersion: '2.10.0',
  riskScore: 42,
  attestationCount: 7,
  jailbreakDetected: false,
  country: 'DE',
  deviceIntegrity: 'strong',
  firstSeenDays: 30,
  suspiciousEvents: 2,
  additionalData: { plan: 'gold', 'user-tier': '3', big: 'x'.repeat(6000) },
};

function run(source: string, value?: JsonValue, context: DeviceContext = device): JsonValue {
  const options = { allowValue: value !== undefined };
  return evaluateExpression(compileExpression(source, options), {
    context,
    now: NOW,
    ...(value !== undefined ? { value } : {}),
  });
}

describe('expression language', () => {
  it.each<[string, JsonValue]>([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 % 4 - -1', 3],
    ['7 / 2', 3.5],
    ["'a' + 1 + true", 'a1true'],
    ["'model: ' + device.model", 'model: iPhone15,2'],
    ['device.riskScore > 40 && !device.jailbreakDetected', true],
    ['device.riskScore < 10 || device.country == "DE"', true],
    ["device.attestationCount >= 7 ? 'trusted' : 'new'", 'trusted'],
    ["'b' > 'a'", true],
    ['1 == 1.0', true],
    ["1 == '1'", false],
    ['[1, 2] == [1, 2]', true],
    ["1 != 2 && 'x' !== 'y'", true],
    ['null ?? 5', 5],
    ["data.missing ?? 'none'", 'none'],
    ["0 || 'fallback'", 'fallback'],
    ['[device.country, device.riskScore, [true]]', ['DE', 42, [true]]],
    ["data['user-tier']", '3'],
    ['data.plan', 'gold'],
    ['device.keyId', 'key-1'],
    ['device.osVersion', '17.4.1'],
    ['device.appVersion', '2.10.0'],
    ['device.firstSeenDays + device.suspiciousEvents', 32],
    ['device.integrity', 'strong'],
    ['device["country"]', 'DE'],
    ['device?.country', 'DE'],
    ['now', NOW],
  ])('%s evaluates to %j', (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it('gives null for fields the device did not report', () => {
    const bare: DeviceContext = { keyId: 'k', riskScore: 0, attestationCount: 1, jailbreakDetected: false };
    expect(run('device.model', undefined, bare)).toBeNull();
    expect(run("'v' + device.osVersion", undefined, bare)).toBe('v');
    expect(run('data.plan', undefined, bare)).toBeNull();
  });

  it('reads into a bound value by own property and index', () => {
    expect(run('value.tier', { tier: 'gold' })).toBe('gold');
    expect(run('value.items[1]', { items: [1, 2] })).toBe(2);
    expect(run('value.missing', { tier: 'gold' })).toBeNull();
    expect(run('value?.tier', null)).toBeNull();
  });
});

describe('condition field names as bare identifiers', () => {
  it.each<[string, JsonValue]>([
    ['device_model', 'iPhone15,2'],
    ["device_model == device.model && country == 'DE'", true],
    ['risk_score > 40 && !jailbreak_detected', true],
    ['attestation_count + first_seen_days + suspicious_events', 39],
    ['device_integrity', 'strong'],
  ])('%s is %j', (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it('still refuses any other bare name', () => {
    expect(() => compileExpression('device_colour')).toThrow('unknown identifier: device_colour');
    expect(() => compileExpression('constructor')).toThrow('unknown identifier: constructor');
  });
});

describe('the examples of EXPRESSIONS.md', () => {
  it('run as documented', () => {
    expect(run("upper(device.country) + '-' + coalesce(data.plan, 'free')")).toBe('DE-gold');
    expect(run('device.riskScore < 30 && !device.jailbreakDetected')).toBe(false);
    expect(run("if(versionCompare(device.appVersion, '3.0') >= 0, 'v3', 'legacy')")).toBe('legacy');
    expect(run('[device.country, device.riskScore]')).toEqual(['DE', 42]);
    expect(run('round(value * 100)', 0.825)).toBe(83);
    expect(run("len(value) <= 5 && !contains(value, 'root')", ['a', 'b'])).toBe(true);
    expect(run("'line\\n' + \"it\\'s\"")).toBe("line\nit's");
  });
});

describe('expression functions', () => {
  it.each<[string, JsonValue]>([
    ['lower(device.model)', 'iphone15,2'],
    ['upper(device.country)', 'DE'],
    ['lower(data.missing)', null],
    ["concat(device.country, '-', device.riskScore, null, true)", 'DE-42true'],
    ['len(device.model)', 10],
    ['len([1, 2, 3])', 3],
    ['len(data.missing)', 0],
    ['min(3, 1, 2)', 1],
    ['max([3, 9, 2])', 9],
    ['round(2.5)', 3],
    ['round(3.14159, 2)', 3.14],
    ['floor(-1.5)', -2],
    ['ceil(1.2)', 2],
    ['abs(-4)', 4],
    ["contains(device.model, 'Phone')", true],
    ["contains(['DE', 'FR'], device.country)", true],
    ["contains(data.missing, 'x')", false],
    ["startsWith(device.model, 'iPhone')", true],
    ["endsWith(device.model, ',3')", false],
    ["if(device.riskScore > 50, 'high', 'low')", 'low'],
    ["if(false, 'x')", null],
    ["coalesce(data.missing, device.country, 'x')", 'DE'],
    ["versionCompare(device.osVersion, '17.10')", -1],
    ["versionCompare(device.appVersion, '2.10')", 0],
    ['toString(device.riskScore)', '42'],
    ['toString([1])', '[1]'],
    ["toNumber(data['user-tier']) * 2", 6],
    ['toNumber(true)', 1],
  ])('%s evaluates to %j', (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it('evaluates only the branch `if` and `coalesce` take', () => {
    expect(run("if(true, 1, toNumber('not a number'))")).toBe(1);
    expect(run("coalesce('x', toNumber('not a number'))")).toBe('x');
  });

  it.each([
    ["toNumber('abc')", 'cannot convert'],
    ['toNumber(null)', 'cannot convert'],
    ['lower(1)', 'expects a string'],
    ['abs(device.country)', 'expects a number'],
    ["versionCompare('x', '1.0')", 'versionCompare'],
    ['min([])', 'at least one number'],
    ['round(1.5, 11)', 'round digits'],
    ['len(true)', 'len expects'],
  ])('%s fails with %j', (source, message) => {
    expect(() => run(source)).toThrow(message);
  });
});

describe('expression errors at run time', () => {
  it.each([
    ["'a' - 1", 'expects a number'],
    ["1 < 'a'", 'compares two numbers or two strings'],
    ['1 / 0', 'non-finite'],
    ['-device.country', 'expects a number'],
    ['device.country.length', 'cannot read property'],
    ['value.items[-1]', 'non-negative integer'],
    ["data['__pro' + 'to__']", 'not accessible'],
    ["data['constr' + 'uctor']", 'not accessible'],
    ['value[true]', 'property name must be'],
    ['value.a.b', 'cannot read property b of null'],
  ])('%s fails with %j', (source, message) => {
    expect(() => run(source, { items: [1] })).toThrow(message);
  });

  it('caps string results, whichever way they grow', () => {
    expect(() => run('data.big + data.big')).toThrow(`longer than ${MAX_CLAIM_VALUE_LENGTH}`);
    expect(() => run('concat(data.big, data.big)')).toThrow(`longer than ${MAX_CLAIM_VALUE_LENGTH}`);
    expect(() => run('toString([data.big, data.big])')).toThrow(`longer than ${MAX_CLAIM_VALUE_LENGTH}`);
  });
});

describe('expression attacks are refused before anything runs', () => {
  it.each([
    ["constructor.constructor('return process')()", 'only built-in functions'],
    ['constructor', 'unknown identifier: constructor'],
    ['__proto__', 'unknown identifier: __proto__'],
    ['device.constructor', 'not accessible'],
    ['device.__proto__', 'not accessible'],
    ["data['__proto__']", 'not accessible'],
    ['data.constructor', 'not accessible'],
    ["''.constructor", 'not accessible'],
    ['[].constructor.prototype', 'not accessible'],
    ["lower.constructor('x')", 'only built-in functions'],
    ['this', '`this` is not available'],
    ['this.process', '`this` is not available'],
    ['process.exit()', 'only built-in functions'],
    ["eval('1')", 'unknown function: eval'],
    ["Function('return 1')", 'unknown function: Function'],
    ['require', 'unknown identifier: require'],
    ['globalThis', 'unknown identifier: globalThis'],
    ['lower(device.model)(1)', 'only built-in functions'],
    ['device.password', 'unknown device field: password'],
    ['device', '`device` must be followed by a field'],
    ['value', '`value` is only available'],
    ['x = 1', 'syntax error'],
    ['a; b', 'single expression'],
    ['1 | 2', 'unsupported operator: |'],
    ['2 ** 8', 'unsupported operator: **'],
    ['~1', 'unsupported operator: ~'],
    ['[1, , 2]', 'array holes'],
    ['1e400', 'out of range'],
    ['lower()', 'lower takes 1 argument'],
    ['if(1)', 'if takes 2 to 3 arguments'],
    ['', 'expression is empty'],
  ])('%s: %s', (source, message) => {
    const errors = validateExpression(source);
    expect(errors.join('\n')).toContain(message);
    expect(() => compileExpression(source)).toThrow(ClaimEvaluationError);
  });

  it('refuses huge and deeply nested input without exhausting the stack', () => {
    expect(validateExpression('1'.repeat(MAX_EXPRESSION_LENGTH + 1))).toEqual([
      `expression is longer than ${MAX_EXPRESSION_LENGTH} characters`,
    ]);
    expect(validateExpression(`${'-('.repeat(600)}1${')'.repeat(600)}`).join()).toContain('nested more than');
    expect(run(`${'('.repeat(900)}1${')'.repeat(900)}`)).toBe(1);
    expect(validateExpression(`${'!'.repeat(1990)}1`).join()).toContain('nested more than');
    expect(validateExpression(`${'abs('.repeat(200)}1${')'.repeat(200)}`).join()).toContain('nested more than');
    expect(validateExpression(`${'1+'.repeat(600)}1`).join()).toContain('nested more than');
    expect(run(`${'1+'.repeat(100)}1`)).toBe(101);
    expect(validateExpression(`[${'1,'.repeat(900)}1]`).join()).toContain('more than 500 nodes');
  });

  it('lists every problem it finds', () => {
    expect(validateExpression('foo(1) + bar + device.pin')).toEqual([
      'unknown function: foo',
      'unknown identifier: bar',
      'unknown device field: pin',
    ]);
    expect(validateExpression("lower(device.model) + '-' + data.plan")).toEqual([]);
    expect(validateExpression('value * 2', { allowValue: true })).toEqual([]);
  });
});
