import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DevicesDataModule } from '../devices/devices-data.module.js';
import { App } from './app.entity.js';
import { AppStatsService } from './app-stats.service.js';
import { AppsController } from './apps.controller.js';
import { AppsService } from './apps.service.js';
import { TenantResolver } from './tenant-resolver.js';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([App]), DevicesDataModule],
  controllers: [AppsController],
  providers: [AppsService, AppStatsService, TenantResolver],
  exports: [TenantResolver, AppsService],
})
export class AppsModule {}
