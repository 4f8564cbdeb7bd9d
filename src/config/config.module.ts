import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from './app-config.js';

export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * Makes the configuration loaded at start injectable everywhere as `@Inject(APP_CONFIG)`. The one
 * global module: configuration is infrastructure that nearly every provider reads and that depends
 * on nothing, so importing it in each module would say nothing about how features depend on
 * each other (the database connection is TypeORM's own root module).
 */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: AppConfigModule, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
