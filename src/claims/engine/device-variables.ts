import type { ValueKind } from '../../common/rules/typed-comparison.js';
import type { ConditionField, DeviceContext, JsonValue } from './claim-types.js';

/** Device fields are typed, so none compares by guessing (`auto`). */
export type FieldKind = Exclude<ValueKind, 'auto'>;

interface ConditionFieldSpec {
  kind: FieldKind;
  read: (context: DeviceContext) => string | number | boolean | undefined;
}

/** How each condition field is read from the device and which comparison rules it follows. */
export const CONDITION_FIELD_SPECS: Readonly<Record<ConditionField, ConditionFieldSpec>> = {
  device_model: { kind: 'text', read: (c) => c.deviceModel },
  os_version: { kind: 'version', read: (c) => c.osVersion },
  app_version: { kind: 'version', read: (c) => c.appVersion },
  risk_score: { kind: 'number', read: (c) => c.riskScore },
  attestation_count: { kind: 'number', read: (c) => c.attestationCount },
  country: { kind: 'text', read: (c) => c.country },
  jailbreak_detected: { kind: 'boolean', read: (c) => c.jailbreakDetected },
  device_integrity: { kind: 'text', read: (c) => c.deviceIntegrity },
  first_seen_days: { kind: 'number', read: (c) => c.firstSeenDays },
  suspicious_events: { kind: 'number', read: (c) => c.suspiciousEvents },
};

type DeviceReader = (context: DeviceContext) => string | number | boolean | undefined;
export type DeviceScalar = string | number | boolean | null;

/** The `device.<name>` variables of expressions and body templates: the whole allow-list. */
const DEVICE_VARIABLES: ReadonlyMap<string, DeviceReader> = new Map<string, DeviceReader>([
  ['keyId', (c) => c.keyId],
  ['model', (c) => c.deviceModel],
  ['osVersion', (c) => c.osVersion],
  ['appVersion', (c) => c.appVersion],
  ['riskScore', (c) => c.riskScore],
  ['attestationCount', (c) => c.attestationCount],
  ['jailbreakDetected', (c) => c.jailbreakDetected],
  ['country', (c) => c.country],
  ['integrity', (c) => c.deviceIntegrity],
  ['firstSeenDays', (c) => c.firstSeenDays],
  ['suspiciousEvents', (c) => c.suspiciousEvents],
]);

/**
 * The condition field names of the interface document, usable in expressions as bare
 * identifiers (`device_model == "iPhone16,1"`): each stands for its `device.<name>` variable.
 */
export const CONDITION_FIELD_VARIABLES: Readonly<Record<ConditionField, string>> = {
  device_model: 'model',
  os_version: 'osVersion',
  app_version: 'appVersion',
  risk_score: 'riskScore',
  attestation_count: 'attestationCount',
  country: 'country',
  jailbreak_detected: 'jailbreakDetected',
  device_integrity: 'integrity',
  first_seen_days: 'firstSeenDays',
  suspicious_events: 'suspiciousEvents',
};

/** The `device.<name>` variable a bare condition field name stands for, if it is one. */
export function conditionFieldVariable(name: string): string | undefined {
  return Object.hasOwn(CONDITION_FIELD_VARIABLES, name) ? CONDITION_FIELD_VARIABLES[name as ConditionField] : undefined;
}

export function isDeviceVariable(name: string): boolean {
  return DEVICE_VARIABLES.has(name);
}

/** Null for an unset optional field; undefined when the name is not a device variable. */
export function readDeviceVariable(context: DeviceContext, name: string): DeviceScalar | undefined {
  const read = DEVICE_VARIABLES.get(name);
  return read ? (read(context) ?? null) : undefined;
}

/**
 * Null-prototype records, so a lookup can only ever find a listed variable: nothing is
 * inherited from Object.prototype.
 */
export function deviceRecord(context: DeviceContext): Record<string, JsonValue> {
  const record = Object.create(null) as Record<string, JsonValue>;
  for (const [name, read] of DEVICE_VARIABLES) record[name] = read(context) ?? null;
  return record;
}

export function dataRecord(context: DeviceContext): Record<string, JsonValue> {
  const record = Object.create(null) as Record<string, JsonValue>;
  for (const [key, value] of Object.entries(context.additionalData ?? {})) {
    if (typeof value === 'string') record[key] = value;
  }
  return record;
}
