import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type { TestApp } from '../harness/test-app.js';
import { sdk } from '../support/sdk-client.js';

/** A feature request as the SDK answers it. */
export interface SdkFeature {
  id: string;
  appId: string;
  title: string;
  description: string;
  status: string;
  voteCount: number;
  commentCount: number;
  createdAt: string;
  updatedAt: string;
}

/** A feature request filed through the SDK by a fresh end user (pending until triaged). */
export async function submitFeatureRequest(
  t: TestApp,
  app: { bundleId: string },
  body: Record<string, unknown> = {},
): Promise<SdkFeature> {
  const response = await sdk(t, app)
    .post('/api/v1/feedback/features')
    .send({
      title: 'Dark mode',
      description: 'Please add a dark theme',
      submitterId: `user-${randomUUID()}`,
      ...body,
    });
  expect(response.status).toBe(201);
  return response.body as SdkFeature;
}
