import { renderMail } from '../mail/mail-templates.js';
import { oneLine } from '../common/one-line.js';
import type { NoticeContext } from '../feedback/staff-notices.js';

interface TicketSummary {
  id: string;
  subject: string;
}

const staffFooter = (context: NoticeContext, preference: string) =>
  `You received this as an Admin or Owner of ${context.organizationName}. Turn off "${preference}" in the notification preferences to stop these notices.`;

const submitterFooter = (context: NoticeContext) =>
  `You received this because you contacted ${context.organizationName} support. Reply from the app to continue the conversation.`;

const ticketUrl = (context: NoticeContext, ticket: TicketSummary) => `${context.dashboardUrl}/support/${ticket.id}`;

export const supportMail = {
  newTicket: (context: NoticeContext, ticket: TicketSummary & { priority: string }, body: string, from: string) =>
    renderMail({
      subject: `New support ticket: ${oneLine(ticket.subject)}`,
      heading: 'A new support ticket was opened',
      paragraphs: [`${from} opened "${ticket.subject}" (priority ${ticket.priority}).`, body],
      action: { label: 'Answer the ticket', url: ticketUrl(context, ticket) },
      footer: staffFooter(context, 'New support ticket'),
    }),
  userReply: (context: NoticeContext, ticket: TicketSummary, body: string, from: string) =>
    renderMail({
      subject: `New reply on "${oneLine(ticket.subject)}"`,
      heading: 'A user replied to a support ticket',
      paragraphs: [`${from} wrote on "${ticket.subject}":`, body],
      action: { label: 'Answer the ticket', url: ticketUrl(context, ticket) },
      footer: staffFooter(context, 'Ticket user reply'),
    }),
  staffReply: (context: NoticeContext, ticket: TicketSummary, body: string) =>
    renderMail({
      subject: `Re: ${oneLine(ticket.subject)}`,
      heading: `${context.organizationName} support replied`,
      paragraphs: [`Support answered your request "${ticket.subject}":`, body],
      footer: submitterFooter(context),
    }),
  resolved: (context: NoticeContext, ticket: TicketSummary) =>
    renderMail({
      subject: `Resolved: ${oneLine(ticket.subject)}`,
      heading: 'Your support request is resolved',
      paragraphs: [
        `${context.organizationName} support marked "${ticket.subject}" as resolved.`,
        'If something is still not right, reply from the app and the ticket opens again.',
      ],
      footer: submitterFooter(context),
    }),
};
