import { renderMail, type MailMessage } from '../mail/mail-templates.js';

export interface RiskAlertMailFacts {
  ruleName: string;
  /** The app's Bundle ID; null for an Android-only app, named by its id. */
  bundleId: string | null;
  appId: string;
  keyId: string;
  detail: string;
  cooldownMinutes: number;
  dashboardUrl: string;
}

/** The mail Admins and Owners get when an `email` rule fires. */
export function riskAlertMail(facts: RiskAlertMailFacts): MailMessage {
  return renderMail({
    subject: `Risk alert: ${facts.ruleName}`,
    heading: `Risk alert "${facts.ruleName}" fired`,
    paragraphs: [
      `In ${facts.bundleId ?? `the Android app ${facts.appId}`}: ${facts.detail}.`,
      `The event that tripped it came from the device key ${facts.keyId}.`,
      `This rule stays quiet for ${facts.cooldownMinutes} minutes, however many more events arrive.`,
    ],
    action: { label: 'Review devices', url: `${facts.dashboardUrl}/devices` },
    footer: 'You received this as an Admin or Owner of an organization with an e-mail risk alert rule.',
  });
}
