import { Module } from '@nestjs/common';
import { MailService } from './mail.service.js';

/** Outgoing mail (SMTP or files); imported by each feature that sends some. */
@Module({ providers: [MailService], exports: [MailService] })
export class MailModule {}
