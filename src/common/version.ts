/**
 * Version numbers as apps report them: `2`, `2.1`, `2.1.3`, `2.1.3.4`, with an optional
 * pre-release (`2.1.3-beta.2`) and build metadata (`+45`, ignored for ordering).
 * Ordering follows semantic versioning: missing parts count as 0, and a pre-release sorts
 * below its release. Written here rather than taken from `semver`: app versions are not strict
 * SemVer (one to four parts; iOS build numbers often add a fourth), and `semver.coerce` would drop
 * the fourth part and the pre-release, ordering `2.1.3.4` and `2.1.3.5` as equal.
 */
export interface ParsedVersion {
  readonly parts: readonly number[];
  readonly prerelease: readonly (string | number)[];
}

const VERSION_PATTERN = /^v?(\d{1,9}(?:\.\d{1,9}){0,3})(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$/;

export function parseVersion(input: string): ParsedVersion | null {
  const match = VERSION_PATTERN.exec(input.trim());
  if (!match) return null;
  const parts = match[1].split('.').map(Number);
  const prerelease = match[2] ? match[2].split('.').map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [];
  return { parts, prerelease };
}

export function isVersion(input: string): boolean {
  return parseVersion(input) !== null;
}

/** Negative when a < b, 0 when equal, positive when a > b. */
export function compareParsedVersions(a: ParsedVersion, b: ParsedVersion): number {
  const length = Math.max(a.parts.length, b.parts.length);
  for (let i = 0; i < length; i++) {
    const diff = (a.parts[i] ?? 0) - (b.parts[i] ?? 0);
    if (diff !== 0) return diff;
  }
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return b.prerelease.length - a.prerelease.length;
  }
  const ids = Math.max(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < ids; i++) {
    const x = a.prerelease[i];
    const y = b.prerelease[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** Compares two version strings; null when either does not parse. */
export function compareVersions(a: string, b: string): number | null {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  return pa && pb ? compareParsedVersions(pa, pb) : null;
}
