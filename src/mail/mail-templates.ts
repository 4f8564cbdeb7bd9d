/** The text and HTML of each mail; plain words, one clear action, the link written out in full. */
export interface MailMessage {
  subject: string;
  text: string;
  html: string;
}

interface Layout {
  subject: string;
  heading: string;
  paragraphs: string[];
  action?: { label: string; url: string };
  footer?: string;
}

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

export function renderMail(layout: Layout): MailMessage {
  const text = [
    layout.heading,
    '',
    ...layout.paragraphs.flatMap((p) => [p, '']),
    ...(layout.action ? [`${layout.action.label}: ${layout.action.url}`, ''] : []),
    layout.footer ?? 'You received this because of activity on your Attestly account.',
  ].join('\n');
  const button = layout.action
    ? `<p style="margin:24px 0"><a href="${escapeHtml(layout.action.url)}" style="background:#1f6feb;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none;font-weight:600">${escapeHtml(layout.action.label)}</a></p>
<p style="color:#57606a;font-size:13px">Or paste this link into your browser:<br><span style="word-break:break-all">${escapeHtml(layout.action.url)}</span></p>`
    : '';
  const html = `<!doctype html><html><body style="margin:0;background:#f6f8fa;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#24292f">
<div style="max-width:520px;margin:32px auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:32px">
<h1 style="font-size:20px;margin:0 0 16px">${escapeHtml(layout.heading)}</h1>
${layout.paragraphs.map((p) => `<p style="line-height:1.5">${escapeHtml(p)}</p>`).join('\n')}
${button}
<hr style="border:none;border-top:1px solid #d0d7de;margin:24px 0">
<p style="color:#57606a;font-size:12px">${escapeHtml(layout.footer ?? 'You received this because of activity on your Attestly account.')}</p>
</div></body></html>`;
  return { subject: layout.subject, text, html };
}

export const mailTemplates = {
  verifyEmail: (url: string) =>
    renderMail({
      subject: 'Confirm your e-mail address',
      heading: 'Welcome to Attestly',
      paragraphs: ['Confirm your e-mail address to activate your account. The link is valid for 24 hours.'],
      action: { label: 'Confirm e-mail address', url },
      footer: 'If you did not create an account, ignore this message.',
    }),
  alreadyRegistered: (loginUrl: string, resetUrl: string) =>
    renderMail({
      subject: 'Someone tried to sign up with your address',
      heading: 'You already have an account',
      paragraphs: [
        'Someone, perhaps you, tried to create an Attestly account with this e-mail address, which already has one.',
        `Sign in at ${loginUrl}, or reset your password if you forgot it.`,
      ],
      action: { label: 'Reset password', url: resetUrl },
      footer: 'If this was not you, no action is needed.',
    }),
  resetPassword: (url: string) =>
    renderMail({
      subject: 'Reset your password',
      heading: 'Reset your password',
      paragraphs: ['Use the link below to choose a new password. It is valid for one hour and works once.'],
      action: { label: 'Choose a new password', url },
      footer: 'If you did not ask for this, ignore this message: your password stays as it is.',
    }),
  confirmEmailChange: (url: string, newEmail: string) =>
    renderMail({
      subject: 'Confirm your new e-mail address',
      heading: 'Confirm your new e-mail address',
      paragraphs: [
        `Your Attestly account asked to change its e-mail address to ${newEmail}.`,
        'Your current address stays active until you confirm. The link is valid for one hour.',
      ],
      action: { label: 'Confirm new address', url },
      footer: 'If you did not ask for this, ignore this message.',
    }),
  invite: (url: string, organizationName: string, role: string, inviter: string | null) =>
    renderMail({
      subject: `You are invited to ${organizationName} on Attestly`,
      heading: `Join ${organizationName}`,
      paragraphs: [
        `${inviter ?? 'An administrator'} invited you to join ${organizationName} as ${role}.`,
        'The invitation is valid for 7 days. Sign in (or create an account) with this e-mail address, then accept.',
      ],
      action: { label: 'Accept invitation', url },
    }),
};
