import { describe, expect, it } from '@jest/globals';
import type { AuditEntry, AuditService } from '../audit/audit.service.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { tierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import type { OrganizationsService } from '../organizations/organizations.service.js';
import type { PlanService } from '../organizations/plan.service.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { FakeWebhookEndpoints } from '../../test/fakes/webhook-endpoints.js';
import type { WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import { SECRET_PREFIX, WebhooksService } from './webhooks.service.js';

const ORG = 'org-a' as OrganizationId;
const OTHER = 'org-b' as OrganizationId;

function auth(organizationId: OrganizationId): OrgAuthContext {
  return {
    caller: { kind: 'session', userId: 'user-1', email: 'admin@example.com', isSuperAdmin: false, role: 'admin' },
    organizationId,
    ipAddress: null,
  };
}

function world(tier = 'basic') {
  const uow = new FakeUnitOfWork();
  const endpoints = new FakeWebhookEndpoints();
  const audited: AuditEntry[] = [];
  const audit = { record: (_auth: unknown, entry: AuditEntry) => Promise.resolve(void audited.push(entry)) };
  const plans = { requireFeature: () => Promise.resolve(tierDefinition(tier)) };
  const organizations = { get: () => Promise.resolve({ serviceTier: tier }) };
  const config = { webhookAllowPrivateNetworks: true } as AppConfig;
  const service = new WebhooksService(
    uow.asUnitOfWork(),
    endpoints as unknown as WebhookEndpointsRepository,
    config,
    audit as unknown as AuditService,
    plans as unknown as PlanService,
    organizations as unknown as OrganizationsService,
  );
  return { service, endpoints, audited };
}

const input = { url: 'https://93.184.216.34/hook', events: ['flag.created'] };

describe('WebhooksService', () => {
  it('creates an active endpoint with a whsec_ secret and audits it without the secret', async () => {
    const w = world();
    const endpoint = await w.service.create(auth(ORG), input);
    expect(endpoint.secret.startsWith(SECRET_PREFIX)).toBe(true);
    expect(endpoint).toMatchObject({ isActive: true, events: ['flag.created'], description: '' });
    expect(w.audited).toEqual([
      expect.objectContaining({ action: 'webhook.created', metadata: { url: input.url, events: ['flag.created'] } }),
    ]);
    expect(JSON.stringify(w.audited)).not.toContain(endpoint.secret);
  });

  it("refuses an endpoint beyond the plan's limit", async () => {
    const w = world();
    const { maxWebhooks } = tierDefinition('basic').limits;
    for (let i = 0; i < maxWebhooks; i++) await w.service.create(auth(ORG), input);
    await expect(w.service.create(auth(ORG), input)).rejects.toMatchObject({ status: 403 });
    expect(w.endpoints.endpoints.size).toBe(maxWebhooks);
  });

  it('refuses an event the plan never delivers with 400 naming events', async () => {
    const w = world();
    await expect(w.service.create(auth(ORG), { ...input, events: ['subscription.changed'] })).rejects.toMatchObject({
      status: 400,
    });
    expect(w.endpoints.endpoints.size).toBe(0);
  });

  it("answers 404 for another organization's endpoint and leaves it as it was", async () => {
    const w = world();
    const endpoint = await w.service.create(auth(ORG), input);
    await expect(w.service.update(auth(OTHER), endpoint.id, { isActive: false })).rejects.toMatchObject({
      status: 404,
    });
    await expect(w.service.remove(auth(OTHER), endpoint.id)).rejects.toMatchObject({ status: 404 });
    await expect(w.service.retry(auth(OTHER), endpoint.id, 'any')).rejects.toMatchObject({ status: 404 });
    expect(w.endpoints.endpoints.get(endpoint.id)).toMatchObject({ isActive: true });
  });

  it('updates the given fields with an audit entry, and deletes with one', async () => {
    const w = world();
    const endpoint = await w.service.create(auth(ORG), input);
    const updated = await w.service.update(auth(ORG), endpoint.id, { isActive: false, description: 'paused' });
    expect(updated).toMatchObject({ isActive: false, description: 'paused', url: input.url });
    await w.service.remove(auth(ORG), endpoint.id);
    expect(w.endpoints.endpoints.size).toBe(0);
    expect(w.audited.map((entry) => entry.action)).toEqual(['webhook.created', 'webhook.updated', 'webhook.deleted']);
  });
});
