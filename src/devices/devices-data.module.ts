import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Device, DeviceEvent } from './device.entity.js';
import { DevicesRepository } from './devices.repository.js';

/**
 * The devices feature's tables behind `DevicesRepository`, with no other dependency, so that the
 * features writing or reading them (attestation, apps, risk alerts) import it without a cycle.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Device, DeviceEvent])],
  providers: [DevicesRepository],
  exports: [DevicesRepository],
})
export class DevicesDataModule {}
