import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuditModule } from '../audit/audit.module.js';
import type { AppConfig } from '../config/app-config.js';
import { AppConfigModule } from '../config/config.module.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { UnitOfWorkModule } from '../database/unit-of-work.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { UsersModule } from '../users/users.module.js';

/**
 * The features the management CLI's identity commands act through (accounts, organizations, API
 * keys), wired as the server wires them, so a command calls their services and never their SQL
 * (decision 0070). No HTTP, no schedules: a Nest application context for one command.
 */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: CliModule,
      imports: [
        AppConfigModule.forRoot(config),
        TypeOrmModule.forRoot({ ...dataSourceOptions(databaseUrl, { extra: { max: 2 } }), autoLoadEntities: true }),
        UnitOfWorkModule,
        AuditModule,
        UsersModule,
        OrganizationsModule,
        ApiKeysModule,
      ],
    };
  }
}
