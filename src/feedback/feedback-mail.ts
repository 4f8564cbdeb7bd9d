import { renderMail } from '../mail/mail-templates.js';
import { oneLine } from '../common/one-line.js';
import type { NoticeContext } from './staff-notices.js';

interface RequestSummary {
  id: string;
  title: string;
}

const footer = (context: NoticeContext, preference: string) =>
  `You received this as an Admin or Owner of ${context.organizationName}. Turn off "${preference}" in the notification preferences to stop these notices.`;

const requestUrl = (context: NoticeContext, request: RequestSummary) =>
  `${context.dashboardUrl}/feedback/${request.id}`;

export const feedbackMail = {
  newFeatureRequest: (
    context: NoticeContext,
    request: RequestSummary & { description: string; appName: string | null },
  ) =>
    renderMail({
      subject: `New feature request: ${oneLine(request.title)}`,
      heading: 'A new feature request was filed',
      paragraphs: [
        `"${request.title}"${request.appName ? ` was requested in ${request.appName}` : ' was requested'}. It waits for triage as pending.`,
        ...(request.description ? [request.description] : []),
      ],
      action: { label: 'Triage the request', url: requestUrl(context, request) },
      footer: footer(context, 'New feature request'),
    }),
  voteThreshold: (context: NoticeContext, request: RequestSummary, votes: number, threshold: number) =>
    renderMail({
      subject: `"${oneLine(request.title)}" reached ${threshold} votes`,
      heading: 'A feature request reached the vote threshold',
      paragraphs: [`"${request.title}" now has ${votes} votes (your threshold is ${threshold}).`],
      action: { label: 'See the request', url: requestUrl(context, request) },
      footer: footer(context, 'Feature vote threshold'),
    }),
  statusChanged: (context: NoticeContext, request: RequestSummary, from: string, to: string, by: string | null) =>
    renderMail({
      subject: `"${oneLine(request.title)}" is now ${to}`,
      heading: 'A feature request changed status',
      paragraphs: [`${by ?? 'An API key'} moved "${request.title}" from ${from} to ${to}.`],
      action: { label: 'See the request', url: requestUrl(context, request) },
      footer: footer(context, 'Feature status change'),
    }),
};
