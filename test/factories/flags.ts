import type { HttpClient } from '../harness/test-app.js';

export interface CreatedFlag {
  id: string;
  key: string;
}

/** A flag of the app, created through the dashboard API (disabled in every environment). */
export async function createFlag(
  owner: HttpClient,
  appId: string,
  key: string,
  valueType = 'boolean',
  defaultValue = 'false',
): Promise<CreatedFlag> {
  const response = await owner
    .post(`/api/v1/dashboard/apps/${appId}/flags`)
    .send({ name: 'A flag', key, valueType, defaultValue })
    .expect(201);
  return response.body as CreatedFlag;
}
