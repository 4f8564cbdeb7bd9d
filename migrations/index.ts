import { Initial1763726400000 } from './1763726400000-initial.js';

/** Every migration, in order. Migrations are never edited after they land. */
export const migrations = [Initial1763726400000];
