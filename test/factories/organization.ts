import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import type { Role } from '../../src/common/access/access.decorator.js';
import type { TestApp } from '../harness/test-app.js';
import { createUser, type TestOrg, type TestUser } from './identity.js';

/** Moves an organization to another plan, like `org:set-tier` does. */
export async function setTier(t: TestApp, org: TestOrg, tier: string): Promise<void> {
  await t.sql(`UPDATE organizations SET service_tier = $2 WHERE id = $1`, [org.id, tier]);
}

/** Adds `count` members of `role` to the organization. */
export async function addMembers(t: TestApp, org: TestOrg, count: number, role: Role = 'member'): Promise<TestUser[]> {
  const users: TestUser[] = [];
  for (let i = 0; i < count; i++) users.push(await createUser(t, { org, role }));
  return users;
}

/** An app row of the organization (the apps feature owns the real creation path). */
export async function createAppRow(
  t: TestApp,
  org: TestOrg,
  options: { name?: string; bundleId?: string; teamId?: string; primary?: boolean; createdAt?: Date } = {},
): Promise<{ id: string; name: string; bundleId: string; teamId: string }> {
  const name = options.name ?? `App ${randomUUID().slice(0, 4)}`;
  const bundleId = options.bundleId ?? `com.example.${randomUUID().slice(0, 8)}`;
  const teamId = options.teamId ?? randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase();
  const [row] = await t.sql<{ id: string }>(
    `INSERT INTO apps (organization_id, app_name, bundle_id, team_id, is_primary, created_at)
     VALUES ($1, $2, $3, $4, $5, COALESCE($6, now())) RETURNING id`,
    [org.id, name, bundleId, teamId, options.primary ?? false, options.createdAt ?? null],
  );
  return { id: row.id, name, bundleId, teamId };
}

/** Every table with an `organization_id` column, from the live schema. */
export async function tenantTables(t: TestApp): Promise<string[]> {
  const rows = await t.sql<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
       JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
      WHERE c.table_schema = 'public' AND c.column_name = 'organization_id' AND tb.table_type = 'BASE TABLE'
      ORDER BY c.table_name`,
  );
  return rows.map((row) => row.table_name);
}

/** Rows per tenant table that still belong to the organization (only non-zero counts). */
export async function rowsOfOrganization(t: TestApp, organizationId: string): Promise<Record<string, number>> {
  const left: Record<string, number> = {};
  for (const table of await tenantTables(t)) {
    const [row] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}" WHERE organization_id = $1`, [
      organizationId,
    ]);
    if (row.n) left[table] = row.n;
  }
  return left;
}

/** The `Stripe-Signature` header Stripe would send for `body`, made by Stripe's SDK. */
export function stripeSignature(body: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });
}

export interface SubscriptionEventOptions {
  /** `customer.subscription.created` (default), `.updated`, `.deleted`, or any other Stripe event type. */
  type?: string;
  id?: string;
  created?: number;
  subscriptionId?: string;
  customerId?: string;
  status?: string;
  organizationId?: string;
  /** On the price's metadata (where a Stripe product catalogue usually carries it). */
  priceTier?: string;
  /** On the subscription's own metadata. */
  subscriptionTier?: string;
  currentPeriodEnd?: number;
  /** Unix seconds of the cycle's anchor (the renewal day of month is its UTC day). */
  billingCycleAnchor?: number;
}

/** A Stripe `customer.subscription.*` event, shaped like the real payload. */
export function subscriptionEvent(options: SubscriptionEventOptions = {}) {
  const created = options.created ?? Math.floor(Date.now() / 1000);
  const subscriptionId = options.subscriptionId ?? `sub_${randomUUID().replace(/-/g, '').slice(0, 14)}`;
  return {
    id: options.id ?? `evt_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    object: 'event',
    api_version: '2024-06-20',
    created,
    livemode: false,
    type: options.type ?? 'customer.subscription.created',
    data: {
      object: {
        id: subscriptionId,
        object: 'subscription',
        customer: options.customerId ?? `cus_${randomUUID().replace(/-/g, '').slice(0, 14)}`,
        status: options.status ?? 'active',
        current_period_end: options.currentPeriodEnd ?? created + 30 * 86_400,
        ...(options.billingCycleAnchor ? { billing_cycle_anchor: options.billingCycleAnchor } : {}),
        metadata: {
          ...(options.organizationId ? { organization_id: options.organizationId } : {}),
          ...(options.subscriptionTier ? { tier: options.subscriptionTier } : {}),
        },
        items: {
          object: 'list',
          data: [
            {
              id: `si_${randomUUID().replace(/-/g, '').slice(0, 14)}`,
              price: {
                id: `price_${randomUUID().replace(/-/g, '').slice(0, 14)}`,
                product: `prod_${randomUUID().replace(/-/g, '').slice(0, 14)}`,
                metadata: options.priceTier ? { tier: options.priceTier } : {},
              },
            },
          ],
        },
      },
    },
  };
}
