import { expect } from '@jest/globals';
import type { HttpClient } from '../harness/test-app.js';
import type { RegisteredApp } from '../support/sdk-client.js';

/** A release note as the console and the SDK answer it. */
export interface ReleaseNote {
  id: string;
  appId: string;
  version: string;
  title: string;
  body: string;
  isPublished: boolean;
  publishedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A release note of the app, created in the console by its owner (unpublished unless `body` says so). */
export async function createReleaseNote(
  app: RegisteredApp,
  body: Record<string, unknown> = {},
  agent: HttpClient = app.owner,
): Promise<ReleaseNote> {
  const response = await agent
    .post('/api/v1/org/release-notes')
    .send({ appId: app.id, version: '1.0.0', title: 'What is new', body: 'Bug fixes', ...body });
  expect(response.status).toBe(201);
  return response.body as ReleaseNote;
}
