import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Device, DeviceEvent } from './device.entity.js';
import { DevicesRepository } from './devices.repository.js';
import { TokenRevocationsRepository } from './token-revocations.repository.js';

/**
 * The devices feature's tables behind `DevicesRepository`, with no other dependency, so that the
 * features writing or reading them (attestation, apps, risk alerts) import it without a cycle.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Device, DeviceEvent])],
  providers: [DevicesRepository, TokenRevocationsRepository],
  exports: [DevicesRepository, TokenRevocationsRepository],
})
export class DevicesDataModule {}
