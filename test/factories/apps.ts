import { randomUUID } from 'node:crypto';
import type { RegisteredApp } from '../support/sdk-client.js';
import { TEAM_ID } from '../support/sdk-client.js';

/** A second app of the same organization, registered through the API by its owner. */
export async function siblingApp(app: RegisteredApp): Promise<RegisteredApp> {
  const bundleId = `com.example.sibling${randomUUID().slice(0, 8)}`;
  const created = await app.owner
    .post('/api/v1/apps')
    .send({ appName: 'Sibling', bundleId, teamId: TEAM_ID })
    .expect(201);
  return { ...app, id: created.body.id as string, bundleId };
}
