import { AppException } from '../common/errors/app-exception.js';

export const releaseNoteExists = (version: string) =>
  new AppException(409, 'release_note_exists', `The app already has a release note for version ${version}`, {
    hint: 'Edit that note instead, or choose another version',
  });
