import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { MailModule } from '../mail/mail.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import {
  FeatureRequest,
  FeatureRequestComment,
  FeatureRequestVote,
  FeedbackNotification,
} from './feature-request.entity.js';
import { FeedbackController } from './feedback.controller.js';
import { FeedbackRepository } from './feedback.repository.js';
import { FeedbackService } from './feedback.service.js';
import { SdkFeedbackController } from './sdk-feedback.controller.js';
import { StaffNotices } from './staff-notices.js';
import { PushModule } from '../push/push.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';

/** Feature requests: SDK submission, votes and the push channel; the staff console. */
@Module({
  imports: [
    TypeOrmModule.forFeature([FeatureRequest, FeatureRequestComment, FeatureRequestVote, FeedbackNotification]),
    AuditModule,
    MailModule,
    OrganizationsModule,
    RateLimitModule,
    PushModule,
  ],
  controllers: [FeedbackController, SdkFeedbackController],
  providers: [FeedbackService, FeedbackRepository, StaffNotices],
  exports: [FeedbackService, StaffNotices],
})
export class FeedbackModule {}
