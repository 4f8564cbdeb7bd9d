import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditLog } from './audit-log.entity.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

/** The organization audit log's writer; every feature that records an audited change imports it. */
@Module({
  imports: [TypeOrmModule.forFeature([AuditLog])],
  providers: [AuditRepository, AuditService],
  exports: [AuditService],
})
export class AuditModule {}
