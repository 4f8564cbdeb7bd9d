import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outgoing webhooks (endpoints, the outbox of events, one delivery per endpoint and event, and
 * every attempt of a delivery) and subscription entitlements ingested per subject.
 */
export class WebhooksEntitlements1763726900000 implements MigrationInterface {
  name = 'WebhooksEntitlements1763726900000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        url text NOT NULL,
        secret text NOT NULL,
        events text[] NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        description text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_endpoints_org_created_idx ON webhook_endpoints (organization_id, created_at DESC)`,
    );

    // The outbox: written in the transaction of the change it announces.
    await queryRunner.query(`
      CREATE TABLE webhook_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        event_type text NOT NULL,
        data jsonb NOT NULL,
        occurred_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_events_org_occurred_idx ON webhook_events (organization_id, occurred_at)`,
    );

    // One row per endpoint and event. `locked_until` + `claim_token` are the lease of a claimed
    // attempt: a sweeper that dies before recording leaves the row due again once the lease ends.
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        event_id uuid NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempt_count integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        locked_until timestamptz,
        claim_token uuid,
        last_status_code integer,
        last_error text,
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_endpoint_created_idx ON webhook_deliveries (endpoint_id, created_at DESC)`,
    );
    await queryRunner.query(`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`);

    await queryRunner.query(`
      CREATE TABLE webhook_delivery_attempts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        attempt_number integer NOT NULL,
        status_code integer,
        response_body text,
        error text,
        latency_ms integer NOT NULL,
        attempted_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, attempt_number)`,
    );

    // The current entitlement of each subject (an end user of a customer's app).
    await queryRunner.query(`
      CREATE TABLE subject_entitlements (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        subject_id text NOT NULL,
        tier text NOT NULL,
        status text NOT NULL,
        interval text NOT NULL,
        source text NOT NULL,
        product_id text NOT NULL,
        expires_at timestamptz,
        source_subscription_id text NOT NULL,
        environment text NOT NULL,
        auto_renew boolean NOT NULL,
        last_event_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (organization_id, subject_id)
      )`);

    // Every ingested event once: the unique index is what de-duplicates redeliveries.
    await queryRunner.query(`
      CREATE TABLE entitlement_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        event_id text NOT NULL,
        subject_id text NOT NULL,
        payload jsonb NOT NULL,
        fingerprint text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX entitlement_events_org_event_key ON entitlement_events (organization_id, event_id)`,
    );
    await queryRunner.query(
      `CREATE INDEX entitlement_events_org_received_idx ON entitlement_events (organization_id, received_at)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'entitlement_events',
      'subject_entitlements',
      'webhook_delivery_attempts',
      'webhook_deliveries',
      'webhook_events',
      'webhook_endpoints',
    ]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
