import type { NoticeContext, StaffNotices } from '../../src/feedback/staff-notices.js';
import type { MailMessage } from '../../src/mail/mail-templates.js';

const CONTEXT: NoticeContext = { organizationName: 'Example', dashboardUrl: 'https://console.example' };

/** The mails feedback and support asked for, rendered, with whom they were for. */
export class RecordedNotices implements Pick<StaffNotices, 'toAdmins' | 'toAddress' | 'toAdminsNow'> {
  readonly sent: { to: string; preference: string | null; subject: string }[] = [];

  toAdmins(_organizationId: string, preference: string, build: (context: NoticeContext) => MailMessage): void {
    this.sent.push({ to: 'admins', preference, subject: build(CONTEXT).subject });
  }

  toAddress(_organizationId: string, preference: string, to: string, build: (context: NoticeContext) => MailMessage) {
    this.sent.push({ to, preference, subject: build(CONTEXT).subject });
  }

  toAdminsNow(_organizationId: string, build: (context: NoticeContext) => MailMessage): void {
    this.sent.push({ to: 'admins', preference: null, subject: build(CONTEXT).subject });
  }

  asStaffNotices(): StaffNotices {
    return this as unknown as StaffNotices;
  }
}
