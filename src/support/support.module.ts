import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { FeedbackModule } from '../feedback/feedback.module.js';
import { MailModule } from '../mail/mail.module.js';
import { PushModule } from '../push/push.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { SdkSupportController } from './sdk-support.controller.js';
import { SupportTicket, SupportTicketMessage } from './support-ticket.entity.js';
import { SupportController } from './support.controller.js';
import { SupportRepository } from './support.repository.js';
import { SupportService } from './support.service.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';

/** Support tickets: SDK creation and messages; the staff console. */
@Module({
  imports: [
    TypeOrmModule.forFeature([SupportTicket, SupportTicketMessage]),
    AuditModule,
    MailModule,
    FeedbackModule,
    OrganizationsModule,
    RateLimitModule,
    PushModule,
  ],
  controllers: [SupportController, SdkSupportController],
  providers: [SupportService, SupportRepository],
})
export class SupportModule {}
