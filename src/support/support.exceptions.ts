import { AppException, notFound } from '../common/errors/app-exception.js';

export const ticketNotFound = () => notFound('Support ticket');

export const notTicketSubmitter = () =>
  new AppException(403, 'not_ticket_submitter', 'Only the submitter of the ticket can post on it', {
    hint: 'Send the submitterId the ticket was created with as authorId',
  });

export const ticketClosed = () =>
  new AppException(409, 'ticket_closed', 'The ticket is closed', { hint: 'Open a new ticket instead' });
