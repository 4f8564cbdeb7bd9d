import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options.js';

/** Arbitrary constant: instances starting together take turns applying migrations. */
const MIGRATION_LOCK = 727_001;

/** Applies pending migrations under an advisory lock; returns the names applied. */
export async function runMigrations(url: string): Promise<string[]> {
  const dataSource = new DataSource(dataSourceOptions(url, { extra: { max: 1 } }));
  await dataSource.initialize();
  try {
    await dataSource.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((migration) => migration.name);
    } finally {
      await dataSource.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await dataSource.destroy();
  }
}
