import { renderMail } from '../mail/mail-templates.js';

/** The mail an inviter gets when the invitation is accepted (the `teamInvite` preference). */
export function inviteAcceptedMail(organizationName: string, inviteeEmail: string, role: string, membersUrl: string) {
  return renderMail({
    subject: `${inviteeEmail} joined ${organizationName}`,
    heading: `${inviteeEmail} accepted your invitation`,
    paragraphs: [`${inviteeEmail} is now a member of ${organizationName} with the ${role} role.`],
    action: { label: 'See the team', url: membersUrl },
    footer: `You received this because you invited ${inviteeEmail}. Administrators can turn these notices off in the notification preferences of ${organizationName}.`,
  });
}
