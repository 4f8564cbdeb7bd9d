import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('webhook_endpoints')
export class WebhookEndpoint {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('text')
  url!: string;

  /** The HMAC key of the signatures: stored as is, since the service must sign with it. */
  @Column('text')
  secret!: string;

  @Column('text', { array: true })
  events!: string[];

  @Column('boolean', { name: 'is_active' })
  isActive!: boolean;

  @Column('text')
  description!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/** The endpoint as every response but the creation one shows it: never the secret. */
export interface WebhookEndpointResponse {
  id: string;
  url: string;
  events: string[];
  isActive: boolean;
  description: string;
  createdAt: Date;
  updatedAt: Date;
}

export function toWebhookEndpointResponse(endpoint: WebhookEndpoint): WebhookEndpointResponse {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    isActive: endpoint.isActive,
    description: endpoint.description,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
}

/** The creation response: adds `secret` (shown only here) and omits `updatedAt`. */
export interface CreatedWebhookEndpointResponse {
  id: string;
  url: string;
  events: string[];
  isActive: boolean;
  description: string;
  createdAt: Date;
  /** The signing secret, shown this once. */
  secret: string;
}

export function toCreatedWebhookEndpointResponse(endpoint: WebhookEndpoint): CreatedWebhookEndpointResponse {
  const { updatedAt: _updatedAt, ...shown } = toWebhookEndpointResponse(endpoint);
  return { ...shown, secret: endpoint.secret };
}
