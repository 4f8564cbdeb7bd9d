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

/** What nodemailer's SMTP transport is handed, and a way to make it fail as a refused login does. */
export class FakeSmtpTransport {
  readonly sent: Record<string, unknown>[] = [];
  closed = false;
  failure: Error | null = null;
  /** Holds each send until `release()`, as a slow SMTP server does. */
  held: (() => void)[] | null = null;

  constructor(readonly url: string) {}

  async sendMail(message: Record<string, unknown>): Promise<{ messageId: string }> {
    if (this.held) await new Promise<void>((resolve) => this.held!.push(resolve));
    if (this.failure) throw this.failure;
    this.sent.push(message);
    return { messageId: `<${this.sent.length}@fake>` };
  }

  release(): void {
    for (const resolve of this.held?.splice(0) ?? []) resolve();
  }

  close(): void {
    this.closed = true;
  }
}
