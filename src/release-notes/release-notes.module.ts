import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { ReleaseNote } from './release-note.entity.js';
import { ReleaseNotesController } from './release-notes.controller.js';
import { ReleaseNotesRepository } from './release-notes.repository.js';
import { ReleaseNotesService } from './release-notes.service.js';
import { SdkReleaseNotesController } from './sdk-release-notes.controller.js';
import { AppsModule } from '../apps/apps.module.js';

/** Release notes: console authoring and publishing; SDK delivery and seen records. */
@Module({
  imports: [TypeOrmModule.forFeature([ReleaseNote]), AuditModule, AppsModule],
  controllers: [ReleaseNotesController, SdkReleaseNotesController],
  providers: [ReleaseNotesService, ReleaseNotesRepository],
})
export class ReleaseNotesModule {}
