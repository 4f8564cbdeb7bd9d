import { Body, Controller, Delete, Get, HttpCode, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import {
  NotificationsQuery,
  SdkFeatureListQuery,
  SubmitFeatureRequestDto,
  UnvoteQuery,
  VoteDto,
  toNotificationResponse,
  toSdkComment,
  toSdkFeature,
  toVoteResponse,
} from './feedback.dto.js';
import { FeedbackService } from './feedback.service.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { pageEnvelope } from '../common/pagination.js';

/**
 * The SDK's feedback surface: the identity headers name the app, and end users act under the
 * ids the app gives them (`submitterId`, `voterId`). No other credential is needed.
 */
@Controller('api/v1/feedback')
@Access({ tenant: true })
export class SdkFeedbackController {
  constructor(private readonly feedback: FeedbackService) {}

  @Post('features')
  @RateLimit('sdk-feedback-client', 'sdk-feedback-app')
  async submit(@Req() request: Request, @Body() body: SubmitFeatureRequestDto) {
    return toSdkFeature(await this.feedback.submit(request.tenant!, body));
  }

  @Get('features')
  async list(@Req() request: Request, @Query() query: SdkFeatureListQuery) {
    const { items, total } = await this.feedback.sdkList(request.tenant!, query);
    return pageEnvelope('metadata', query, items.map(toSdkFeature), total);
  }

  @Get('features/:featureId')
  async get(@Req() request: Request, @UuidParam('featureId') featureId: string) {
    const { feature, comments } = await this.feedback.sdkGet(request.tenant!, featureId);
    return { ...toSdkFeature(feature), comments: comments.map(toSdkComment) };
  }

  @Post('features/:featureId/vote')
  @RateLimit('sdk-feedback-client', 'sdk-feedback-app')
  async vote(@Req() request: Request, @UuidParam('featureId') featureId: string, @Body() body: VoteDto) {
    return toVoteResponse(await this.feedback.vote(request.tenant!, featureId, body));
  }

  @Delete('features/:featureId/vote')
  @RateLimit('sdk-feedback-client', 'sdk-feedback-app')
  @HttpCode(204)
  async unvote(
    @Req() request: Request,
    @UuidParam('featureId') featureId: string,
    @Query() query: UnvoteQuery,
  ): Promise<void> {
    await this.feedback.unvote(request.tenant!, featureId, query.voter_id);
  }

  /** The push channel: staff comments on the requests the subscriber filed or voted for. */
  @Get('notifications')
  async notifications(@Req() request: Request, @Query() query: NotificationsQuery) {
    const { items, total } = await this.feedback.notifications(request.tenant!, query);
    return pageEnvelope('metadata', query, items.map(toNotificationResponse), total);
  }
}
