import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  MaxLength,
  Validate,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { isVersion } from '../common/version.js';
import { PageQuery } from '../common/pagination.js';
import type { ReleaseNote } from './release-note.entity.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export const VERSION_MAX = 64;
export const TITLE_MAX = 200;
export const BODY_MAX = 20_000;

@ValidatorConstraint({ name: 'isVersion' })
class IsVersionConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'string' && isVersion(value);
  }

  defaultMessage(): string {
    return '$property must be a version number such as 2.1.0, 1.0 or 2.1.3-beta';
  }
}

export class ReleaseNotesQuery extends PageQuery {
  @IsOptional()
  @IsUUID('all', { message: 'appId must be a UUID' })
  appId?: string;
}

export class CreateReleaseNoteDto {
  @IsUUID('all', { message: 'appId must be a UUID' })
  appId!: string;

  @Transform(trim)
  @IsString({ message: 'version is required' })
  @Length(1, VERSION_MAX, { message: `version must be 1 to ${VERSION_MAX} characters` })
  @Validate(IsVersionConstraint)
  version!: string;

  @Transform(trim)
  @IsString({ message: 'title is required' })
  @Length(1, TITLE_MAX, { message: `title must be 1 to ${TITLE_MAX} characters` })
  title!: string;

  @IsString({ message: 'body is required' })
  @Matches(/\S/, { message: 'body must not be empty' })
  @MaxLength(BODY_MAX, { message: `body must be at most ${BODY_MAX} characters` })
  body!: string;

  @IsOptional()
  @IsBoolean({ message: 'isPublished must be a boolean' })
  isPublished?: boolean;
}

export class UpdateReleaseNoteDto {
  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, VERSION_MAX, { message: `version must be 1 to ${VERSION_MAX} characters` })
  @Validate(IsVersionConstraint)
  version?: string;

  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, TITLE_MAX, { message: `title must be 1 to ${TITLE_MAX} characters` })
  title?: string;

  @IsOptional()
  @IsString()
  @Matches(/\S/, { message: 'body must not be empty' })
  @MaxLength(BODY_MAX, { message: `body must be at most ${BODY_MAX} characters` })
  body?: string;

  @IsEmpty({ message: 'isPublished cannot be set here; use POST .../publish or .../unpublish' })
  isPublished?: unknown;
}

export class PendingNotesQuery {
  @Transform(trim)
  @IsString({ message: 'installedVersion is required' })
  @MaxLength(VERSION_MAX)
  @Validate(IsVersionConstraint)
  installedVersion!: string;

  @Transform(trim)
  @IsString({ message: 'currentVersion is required' })
  @MaxLength(VERSION_MAX)
  @Validate(IsVersionConstraint)
  currentVersion!: string;
}

export interface ReleaseNoteResponse {
  id: string;
  appId: string;
  /** The app version the note is for. */
  version: string;
  title: string;
  body: string;
  isPublished: boolean;
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toReleaseNoteResponse(note: ReleaseNote): ReleaseNoteResponse {
  return {
    id: note.id,
    appId: note.appId,
    version: note.version,
    title: note.title,
    body: note.body,
    isPublished: note.isPublished,
    publishedAt: note.publishedAt,
    createdAt: note.createdAt,
    updatedAt: note.updatedAt,
  };
}
