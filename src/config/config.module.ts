import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from './app-config.js';

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Makes the configuration loaded at start injectable everywhere as `@Inject(APP_CONFIG)`. */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: AppConfigModule, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
