import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import {
  FeatureStatusDto,
  FeedbackListQuery,
  StaffCommentDto,
  toConsoleComment,
  toConsoleFeature,
} from './feedback.dto.js';
import { FeedbackService } from './feedback.service.js';
import { pageEnvelope } from '../common/pagination.js';

const READ = { session: 'viewer', apiKey: ['feedback:read'] } as const;
const MANAGE = { session: 'member', apiKey: ['feedback:manage'] } as const;

/** The staff console for feature requests (snake_case): viewers read, members triage. */
@Controller('api/v1/org/feedback')
@InvalidInputStatus(400)
export class FeedbackController {
  constructor(private readonly feedback: FeedbackService) {}

  @Get()
  @Access(READ)
  async list(@OrgAuth() auth: OrgAuthContext, @Query() query: FeedbackListQuery) {
    const { items, total } = await this.feedback.list(auth, query);
    return pageEnvelope('flat', query, items.map(toConsoleFeature), total);
  }

  @Get(':featureId')
  @Access(READ)
  async get(@OrgAuth() auth: OrgAuthContext, @UuidParam('featureId') featureId: string) {
    const { feature, comments } = await this.feedback.get(auth, featureId);
    return { feature: toConsoleFeature(feature), comments: comments.map(toConsoleComment) };
  }

  @Post(':featureId/status')
  @Access(MANAGE)
  @HttpCode(200)
  async setStatus(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('featureId') featureId: string,
    @Body() body: FeatureStatusDto,
  ) {
    return toConsoleFeature(await this.feedback.setStatus(auth, featureId, body.status));
  }

  @Post(':featureId/comments')
  @Access(MANAGE)
  async comment(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('featureId') featureId: string,
    @Body() body: StaffCommentDto,
  ) {
    return toConsoleComment(await this.feedback.comment(auth, featureId, body.body));
  }
}
