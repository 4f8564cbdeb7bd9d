import type { OrganizationId } from '../common/access/tenant-id.js';
import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type {
  ClaimDataType,
  ClaimDefinition,
  ClaimType,
  ConditionalRule,
  ExternalConfig,
  ValidationRules,
} from './engine/index.js';

/** One custom claim definition of an organization (table `custom_claims`). */
@Entity('custom_claims')
export class CustomClaim {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: OrganizationId;

  @Column('text', { name: 'claim_key' })
  claimKey!: string;

  @Column('text', { name: 'claim_name' })
  claimName!: string;

  @Column('text', { name: 'claim_type' })
  claimType!: ClaimType;

  @Column('text', { name: 'data_type' })
  dataType!: ClaimDataType;

  @Column('text', { nullable: true })
  description!: string | null;

  @Column('integer')
  priority!: number;

  @Column('boolean', { name: 'is_active' })
  isActive!: boolean;

  @Column('text', { name: 'static_value', nullable: true })
  staticValue!: string | null;

  @Column('jsonb', { name: 'conditional_rules', nullable: true })
  conditionalRules!: ConditionalRule[] | null;

  @Column('text', { name: 'dynamic_expression', nullable: true })
  dynamicExpression!: string | null;

  @Column('jsonb', { name: 'external_config', nullable: true })
  externalConfig!: ExternalConfig | null;

  @Column('jsonb', { name: 'validation_rules', nullable: true })
  validationRules!: ValidationRules | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/** What the evaluation engine needs of a stored claim. */
export function toClaimDefinition(claim: CustomClaim): ClaimDefinition {
  return {
    id: claim.id,
    claimKey: claim.claimKey,
    claimName: claim.claimName,
    claimType: claim.claimType,
    dataType: claim.dataType,
    priority: claim.priority,
    isActive: claim.isActive,
    staticValue: claim.staticValue,
    conditionalRules: claim.conditionalRules,
    dynamicExpression: claim.dynamicExpression,
    externalConfig: claim.externalConfig,
    validationRules: claim.validationRules,
  };
}
