import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { testConfig } from '../../test/fakes/config.js';
import { FakeSmtpTransport } from '../../test/fakes/mail.js';
import { createLogger as writeLogTo, type LogSettings } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { mailTemplates } from './mail-templates.js';

// What the service logs, through the real logger (its redaction included), read line by line.
const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      logLines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  },
});
jest.unstable_mockModule('../common/logging/logger.js', () => ({
  createLogger: (settings: LogSettings) => writeLogTo(settings, logSink),
}));
// SMTP is the in-memory transport: nothing leaves the process.
const transports: FakeSmtpTransport[] = [];
jest.unstable_mockModule('nodemailer', () => ({
  default: {
    createTransport: (url: string) => {
      const transport = new FakeSmtpTransport(url);
      transports.push(transport);
      return transport;
    },
  },
}));
const { MailService } = await import('./mail.service.js');

const SMTP_URL = 'smtp://mailer:smtp-pass-3@smtp.test:587';
const RESET_LINK = 'https://app.test/reset-password?token=tok-123';

/** Lets mail sent without waiting reach the transport; no timer is involved. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('MailService (files in development, SMTP when configured)', () => {
  let dir: string;
  let mailDir: string;
  const inFiles = (): AppConfig => ({ ...testConfig, logLevel: 'info', smtpUrl: null, mailDir });
  const bySmtp = (): AppConfig => ({ ...testConfig, logLevel: 'info', smtpUrl: SMTP_URL, mailDir });
  const reset = (to = 'ann@example.com') => ({ to, ...mailTemplates.resetPassword(RESET_LINK) });
  const files = () => readdirSync(mailDir);
  const written = () =>
    files().map((name) => JSON.parse(readFileSync(join(mailDir, name), 'utf8')) as Record<string, unknown>);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'attestly-mail-'));
    mailDir = join(dir, 'data', 'mail');
    logLines.length = 0;
    transports.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('without SMTP_URL', () => {
    it('writes each mail as one JSON file in MAIL_DIR, created when missing, with to, subject, text, html, its links and when', async () => {
      const mail = new MailService(inFiles());
      await mail.send(reset());
      expect(transports).toEqual([]);
      expect(files()).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d-]+Z-[0-9a-f-]{36}\.json$/)]);
      const [file] = written();
      expect(file).toEqual({
        to: 'ann@example.com',
        subject: 'Reset your password',
        text: expect.stringContaining(`Choose a new password: ${RESET_LINK}`),
        html: expect.stringContaining(`href="${RESET_LINK}"`),
        links: [RESET_LINK],
        createdAt: expect.any(String),
      });
      expect(new Date(file.createdAt as string).toISOString()).toBe(file.createdAt);
    });

    it('lists each link of the text once, in order, without the bracket, quote or sentence punctuation around it', async () => {
      const mail = new MailService(inFiles());
      await mail.send({
        to: 'ann@example.com',
        subject: 'Links',
        text: `Open ${RESET_LINK} now.\n(or https://app.test/help)\n"https://app.test/quoted"\nAgain: ${RESET_LINK}\nSign in at https://app.test/login, or see https://app.test/faq.`,
        html: '<a href="https://app.test/only-in-html">x</a>',
      });
      expect(written()[0].links).toEqual([
        RESET_LINK,
        'https://app.test/help',
        'https://app.test/quoted',
        'https://app.test/login',
        'https://app.test/faq',
      ]);
    });

    it('makes the file readable by its owner only, since its links carry sign-in tokens', async () => {
      await new MailService(inFiles()).send(reset());
      expect(statSync(join(mailDir, files()[0])).mode & 0o777).toBe(0o600);
    });

    it('keeps every mail when many are sent at the same instant, and leaves no half-written file', async () => {
      const mail = new MailService(inFiles());
      await Promise.all(
        Array.from({ length: 20 }, (_, n) => mail.send({ ...reset(`user${n}@example.com`), subject: `Mail ${n}` })),
      );
      expect(files()).toHaveLength(20);
      expect(files().every((name) => name.endsWith('.json'))).toBe(true);
      expect(
        written()
          .map((file) => file.subject as string)
          .sort(),
      ).toEqual(Array.from({ length: 20 }, (_, n) => `Mail ${n}`).sort());
      expect(logLines).toEqual([]);
    });

    it('does not fail the request when MAIL_DIR cannot be written, and logs the failure with the subject', async () => {
      writeFileSync(join(dir, 'data'), 'a file where the directory should be');
      await expect(new MailService(inFiles()).send(reset())).resolves.toBeUndefined();
      expect(logLines).toEqual([
        expect.objectContaining({
          level: 50,
          component: 'mail',
          msg: 'mail could not be sent',
          subject: 'Reset your password',
        }),
      ]);
    });
  });

  describe('with SMTP_URL', () => {
    it('sends by SMTP from the service address with to, subject, text and html, and writes no file', async () => {
      const mail = new MailService(bySmtp());
      const message = reset();
      await mail.send(message);
      expect(transports.map((transport) => transport.url)).toEqual([SMTP_URL]);
      expect(transports[0].sent).toEqual([
        {
          from: 'Attestly <no-reply@attestly.local>',
          to: 'ann@example.com',
          subject: message.subject,
          text: message.text,
          html: message.html,
        },
      ]);
      expect(() => readdirSync(mailDir)).toThrow();
    });

    it('does not fail the request when the SMTP server refuses the mail, and logs why without the SMTP password, the token or the body', async () => {
      const mail = new MailService(bySmtp());
      transports[0].failure = Object.assign(new Error('Invalid login: 535 5.7.8 Authentication failed'), {
        code: 'EAUTH',
        command: 'AUTH PLAIN',
      });
      await expect(mail.send(reset())).resolves.toBeUndefined();
      expect(logLines).toEqual([
        expect.objectContaining({
          level: 50,
          component: 'mail',
          msg: 'mail could not be sent',
          subject: 'Reset your password',
          err: expect.objectContaining({ message: 'Invalid login: 535 5.7.8 Authentication failed', code: 'EAUTH' }),
        }),
      ]);
      const logged = JSON.stringify(logLines);
      for (const secret of ['smtp-pass-3', SMTP_URL, 'tok-123', 'Choose a new password']) {
        expect(logged).not.toContain(secret);
      }
    });

    it('sends later without holding up the caller, and the mail still goes out', async () => {
      const mail = new MailService(bySmtp());
      const smtp = transports[0];
      smtp.held = [];
      expect(mail.sendLater(reset())).toBeUndefined();
      await settled();
      expect(smtp.sent).toEqual([]);
      smtp.release();
      await settled();
      expect(smtp.sent.map((message) => message.to)).toEqual(['ann@example.com']);
    });

    it('logs a mail sent later that fails, instead of leaving a rejection unhandled', async () => {
      const mail = new MailService(bySmtp());
      transports[0].failure = new Error('connect ECONNREFUSED 10.0.0.9:587');
      mail.sendLater(reset());
      await settled();
      expect(logLines.map((line) => line.msg)).toEqual(['mail could not be sent']);
    });

    it('closes the SMTP connection when the service shuts down', () => {
      const mail = new MailService(bySmtp());
      mail.onModuleDestroy();
      expect(transports[0].closed).toBe(true);
    });
  });

  it('writes the link out in full in the text, and escapes in the HTML what users typed', () => {
    const url = 'https://app.test/invites/accept?token=tok-9&org=1';
    const invite = mailTemplates.invite(url, '<b>Acme & Co</b>', 'member', 'Ann "the admin"');
    expect(invite.subject).toBe('You are invited to <b>Acme & Co</b> on Attestly');
    expect(invite.text).toContain(`Accept invitation: ${url}`);
    expect(invite.html).toContain('href="https://app.test/invites/accept?token=tok-9&amp;org=1"');
    expect(invite.html).toContain('Join &lt;b&gt;Acme &amp; Co&lt;/b&gt;');
    expect(invite.html).toContain('Ann &quot;the admin&quot; invited you');
    expect(invite.html).not.toContain('<b>Acme');
  });
});
