import { AppException, notFound } from '../common/errors/app-exception.js';

export const featureRequestNotFound = () => notFound('Feature request');

export const duplicateVote = () =>
  new AppException(409, 'duplicate_vote', 'This user or device has already voted for this feature request', {
    hint: 'Remove the vote with DELETE .../vote?voter_id= before voting again',
  });
