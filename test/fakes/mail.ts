import type { Mail, MailService } from '../../src/mail/mail.service.js';

/** The mail that would have gone out, in order. */
export class FakeMail {
  readonly sent: Mail[] = [];

  send(mail: Mail): Promise<void> {
    this.sent.push(mail);
    return Promise.resolve();
  }

  sendLater(mail: Mail): void {
    this.sent.push(mail);
  }

  asMailService(): MailService {
    return this as unknown as MailService;
  }
}
