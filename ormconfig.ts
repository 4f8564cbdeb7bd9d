import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/app-config.js';
import { dataSourceOptions } from './src/database/data-source-options.js';

/**
 * The TypeORM data source for tools (`typeorm migration:*`). It needs DATABASE_URL; the service
 * and `npm run cli -- migrate` also work on the embedded database without it.
 */
const { databaseUrl } = loadConfig();
if (!databaseUrl) throw new Error('DATABASE_URL must be set to use the TypeORM command line');

const dataSource = new DataSource(dataSourceOptions(databaseUrl));
export default dataSource;
