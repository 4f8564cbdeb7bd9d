import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import nodemailer, { type Transporter } from 'nodemailer';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { createLogger } from '../common/logging/logger.js';
import type { MailMessage } from './mail-templates.js';

export interface Mail extends MailMessage {
  to: string;
}

// A link ends before white space, quotes, brackets, and the punctuation of the sentence around it
// ("Sign in at https://…/login, or …"): a URL's last character is never one of `.,;:!?`.
const URL_PATTERN = /https?:\/\/[^\s"'<>)]*[^\s"'<>).,;:!?]/g;
const FROM = 'Attestly <no-reply@attestly.local>';

/**
 * Every mail the service sends goes through here: by SMTP when SMTP_URL is set, else as one JSON
 * file per message in MAIL_DIR, with every link listed, which is how developers and tests follow
 * verification and reset links. A mail failure is logged and never fails the request.
 */
@Injectable()
export class MailService implements OnModuleDestroy {
  private readonly transport: Transporter | null;
  private readonly logger;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.transport = config.smtpUrl ? nodemailer.createTransport(config.smtpUrl) : null;
    this.logger = createLogger(config).child({ component: 'mail' });
  }

  async send(mail: Mail): Promise<void> {
    try {
      if (this.transport) {
        await this.transport.sendMail({
          from: FROM,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
        });
      } else {
        await this.writeFile(mail);
      }
    } catch (error) {
      this.logger.error({ err: error, subject: mail.subject }, 'mail could not be sent');
    }
  }

  /** Sends without waiting: for mails caused by an action whose answer must not wait on mail. */
  sendLater(mail: Mail): void {
    void this.send(mail);
  }

  onModuleDestroy(): void {
    this.transport?.close();
  }

  private async writeFile(mail: Mail): Promise<void> {
    const createdAt = new Date();
    const links = [...new Set(mail.text.match(URL_PATTERN) ?? [])];
    await mkdir(this.config.mailDir, { recursive: true });
    const name = `${createdAt.toISOString().replace(/[:.]/g, '-')}-${randomUUID()}.json`;
    const body = { to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, links, createdAt };
    // Written under a temporary name, then renamed: a reader never sees half a message.
    const path = join(this.config.mailDir, name);
    await writeFile(`${path}.tmp`, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
    await rename(`${path}.tmp`, path);
  }
}
