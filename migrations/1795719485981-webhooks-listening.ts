import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhooks feature's read for the one-statement validate of decision 0078: whether an active
 * endpoint of the organization subscribes to any of the webhook events given. A false answer means
 * publishing those events would write no delivery (the outbox writes only for a listening
 * endpoint), so the statement may skip the publication; a true one sends the caller to the
 * transactional path, where the outbox decides with its full rule (plan, app setting). The table
 * stays the webhooks feature's. A SQL-standard body, resolved when it is created.
 */
export class WebhooksListening1795719485981 implements MigrationInterface {
  name = 'WebhooksListening1795719485981';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION webhooks_listening(organization uuid, webhook_events text[])
      RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE
      BEGIN ATOMIC
        SELECT EXISTS (
          SELECT 1 FROM webhook_endpoints e
           WHERE e.organization_id = webhooks_listening.organization AND e.is_active
             AND e.events && webhooks_listening.webhook_events
        );
      END`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION webhooks_listening(uuid, text[])`);
  }
}
