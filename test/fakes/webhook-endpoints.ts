import { randomUUID } from 'node:crypto';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { WebhookEndpoint } from '../../src/webhooks/webhook-endpoint.entity.js';
import type {
  AttemptRow,
  DeliveryRow,
  NewWebhookEndpoint,
  WebhookEndpointsRepository,
} from '../../src/webhooks/webhook-endpoints.repository.js';

type Public<T> = { [K in keyof T]: T[K] };

/** `WebhookEndpointsRepository` in memory: endpoints by id; no deliveries unless a test adds them. */
export class FakeWebhookEndpoints implements Public<WebhookEndpointsRepository> {
  readonly endpoints = new Map<string, WebhookEndpoint>();
  readonly deliveryRows: (DeliveryRow & { organization_id: string })[] = [];

  private of(organizationId: OrganizationId): WebhookEndpoint[] {
    return [...this.endpoints.values()].filter((endpoint) => endpoint.organizationId === organizationId);
  }

  list(organizationId: OrganizationId): Promise<WebhookEndpoint[]> {
    return Promise.resolve(this.of(organizationId).reverse());
  }

  find(organizationId: OrganizationId, id: string): Promise<WebhookEndpoint | null> {
    const endpoint = this.endpoints.get(id);
    return Promise.resolve(endpoint?.organizationId === organizationId ? { ...endpoint } : null);
  }

  lock(organizationId: OrganizationId, id: string): Promise<WebhookEndpoint | null> {
    return this.find(organizationId, id);
  }

  count(organizationId: OrganizationId): Promise<number> {
    return Promise.resolve(this.of(organizationId).length);
  }

  insert(organizationId: OrganizationId, fields: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    const now = new Date();
    const endpoint = { id: randomUUID(), organizationId, ...fields, createdAt: now, updatedAt: now } as WebhookEndpoint;
    this.endpoints.set(endpoint.id, endpoint);
    return Promise.resolve({ ...endpoint });
  }

  save(organizationId: OrganizationId, endpoint: WebhookEndpoint): Promise<WebhookEndpoint> {
    if (endpoint.organizationId !== organizationId) throw new Error('webhook endpoint of another organization');
    this.endpoints.set(endpoint.id, { ...endpoint, updatedAt: new Date() });
    return Promise.resolve({ ...endpoint });
  }

  delete(organizationId: OrganizationId, id: string): Promise<void> {
    if (this.endpoints.get(id)?.organizationId === organizationId) this.endpoints.delete(id);
    return Promise.resolve();
  }

  deliveries(organizationId: OrganizationId, endpointId: string, window: { limit: number; offset: number }) {
    const rows = this.deliveryRows.filter(
      (row) => row.organization_id === organizationId && row.endpoint_id === endpointId,
    );
    return Promise.resolve({ rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length });
  }

  delivery(organizationId: OrganizationId, endpointId: string, deliveryId: string): Promise<DeliveryRow | null> {
    const row = this.deliveryRows.find(
      (candidate) =>
        candidate.organization_id === organizationId &&
        candidate.endpoint_id === endpointId &&
        candidate.id === deliveryId,
    );
    return Promise.resolve(row ?? null);
  }

  async resetFailed(organizationId: OrganizationId, endpointId: string, deliveryId: string): Promise<boolean> {
    const row = await this.delivery(organizationId, endpointId, deliveryId);
    if (!row || row.status !== 'failed') return false;
    Object.assign(row, { status: 'pending', attempt_count: 0, next_attempt_at: new Date() });
    return true;
  }

  attemptsOf(): Promise<Map<string, AttemptRow[]>> {
    return Promise.resolve(new Map<string, AttemptRow[]>());
  }
}
