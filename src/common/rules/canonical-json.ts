/**
 * JSON with the keys of every object in code-unit order, however deep; arrays keep their order and
 * undefined members are left out as JSON.stringify leaves them. The same content gives the same text
 * whatever order its keys were written or stored in (jsonb keeps none): webhook bodies are signed
 * over it, entitlement states fingerprinted and claim definitions compared by it.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, sortKeys);
}

// JSON.stringify has already applied toJSON (a Date is its ISO string here); the new object defines
// each key as its own property, so a `__proto__` key stays a key.
function sortKeys(_key: string, item: unknown): unknown {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
  const source = item as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(source)
      .sort()
      .map((key) => [key, source[key]]),
  );
}
