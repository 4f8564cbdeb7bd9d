import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { StaffNotices } from '../feedback/staff-notices.js';
import { PushModule } from '../push/push.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { SdkSupportController } from './sdk-support.controller.js';
import { SupportTicket, SupportTicketMessage } from './support-ticket.entity.js';
import { SupportController } from './support.controller.js';
import { SupportService } from './support.service.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';

/** Support tickets: SDK creation and messages; the staff console. */
@Module({
  imports: [
    TypeOrmModule.forFeature([SupportTicket, SupportTicketMessage]),
    OrganizationsModule,
    RateLimitModule,
    PushModule,
  ],
  controllers: [SupportController, SdkSupportController],
  providers: [SupportService, StaffNotices],
})
export class SupportModule {}
