import { loadConfig } from '../../src/config/app-config.js';

/** The configuration of a service built for a unit test: every default, logs off. */
export const testConfig = loadConfig({ LOG_LEVEL: 'silent' });
