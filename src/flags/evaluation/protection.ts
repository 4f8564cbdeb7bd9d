import { ENVIRONMENTS, type Environment, type FlagEnvironmentConfig } from './flag-types.js';

/** An environment of a flag key that requires approved change requests (decision 0064). */
export interface Protection {
  readonly flagKey: string;
  readonly environment: Environment;
}

/** What the reach of a protection needs to know of a flag of the app. */
export interface ProtectedFlag {
  readonly key: string;
  readonly environments: Readonly<Record<Environment, Pick<FlagEnvironmentConfig, 'prerequisites'>>>;
}

/**
 * The environments in which what `key` serves reaches a protected environment: those where the
 * key itself is protected, and those where it is a prerequisite, at any depth, of a key protected
 * there (a prerequisite's value for a device decides what its dependent serves, in the same
 * environment). Whether an environment is on does not matter: switching it on is a protected
 * change too, and would then serve what the prerequisite serves.
 */
export function protectedEnvironments(
  key: string,
  flags: readonly ProtectedFlag[],
  protections: readonly Protection[],
): Environment[] {
  const byKey = new Map(flags.map((flag) => [flag.key, flag]));
  return ENVIRONMENTS.filter((environment) => {
    const reached = new Set<string>();
    const pending = protections.filter((p) => p.environment === environment).map((p) => p.flagKey);
    while (pending.length) {
      const next = pending.pop()!;
      if (reached.has(next)) continue;
      reached.add(next);
      for (const prerequisite of byKey.get(next)?.environments[environment].prerequisites ?? []) {
        pending.push(prerequisite.flagKey);
      }
    }
    return reached.has(key);
  });
}
