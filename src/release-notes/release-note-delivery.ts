import { compareParsedVersions, parseVersion, type ParsedVersion } from '../common/version.js';

/** Versions have at most four numeric parts; missing ones count as 0. */
const KEY_PARTS = 4;

/**
 * The canonical form of a version, equal for every spelling of the same version (`1.0`, `1.0.0`,
 * `v1.0.0+45`), so one note per app and version holds however it is written. Null when the
 * input is not a version.
 */
export function versionKey(input: string): string | null {
  const parsed = parseVersion(input);
  if (!parsed) return null;
  const parts = [...parsed.parts, ...Array<number>(KEY_PARTS - parsed.parts.length).fill(0)];
  return parsed.prerelease.length ? `${parts.join('.')}-${parsed.prerelease.join('.')}` : parts.join('.');
}

/**
 * The delivery rule: a device is shown a note only when the note's version is above the version
 * it originally installed and at or below the one it runs now, so a fresh install (installed ==
 * current) sees nothing. Semantic order: pre-releases sort below their release. Newest first.
 */
export function deliverableNotes<T extends { version: string }>(
  notes: readonly T[],
  installed: string,
  current: string,
): T[] {
  const from = parseVersion(installed);
  const to = parseVersion(current);
  if (!from || !to) return [];
  return notes
    .map((note) => ({ note, version: parseVersion(note.version) }))
    .filter(
      (entry): entry is { note: T; version: ParsedVersion } =>
        entry.version !== null &&
        compareParsedVersions(entry.version, from) > 0 &&
        compareParsedVersions(entry.version, to) <= 0,
    )
    .sort((a, b) => compareParsedVersions(b.version, a.version))
    .map((entry) => entry.note);
}
