import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AuditService, type AuditEntry } from '../audit/audit.service.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { invalidField, notFound } from '../common/errors/app-exception.js';
import { canonicalJson } from '../common/rules/canonical-json.js';
import { type TierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ClaimDefinitionsCache } from './claim-definitions-cache.js';
import {
  CLAIM_KEY_PATTERN,
  CONFIGURATION_FIELD,
  definitionProblems,
  foreignConfigurationProblems,
  immutableFieldProblems,
  normalizeConfiguration,
  normalizeValidationRules,
  type ClaimConfiguration,
  type ClaimInput,
  type ClaimPatch,
  type ClaimTestInput,
} from './claim-input.js';
import {
  bulkClaimsUnavailable,
  claimLimitReached,
  claimTypeUnavailable,
  duplicateClaimKey,
  invalidClaim,
} from './claims.exceptions.js';
import { ClaimsRepository } from './claims.repository.js';
import { CustomClaim, toClaimDefinition } from './custom-claim.entity.js';
import {
  evaluateClaim,
  ExternalClaimFetcher,
  type ClaimDataType,
  type ClaimDefinition,
  type ClaimTestResult,
  type ClaimType,
  type DeviceContext,
  type ExternalConfig,
  type FieldError,
} from './engine/index.js';
import { restoreRedactedSecrets } from './external-secrets.js';
import { PlanService } from '../organizations/plan.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TEST_CLAIM_KEY = 'test_claim';

type Audit = Omit<AuditEntry, 'organizationId' | 'resourceType'>;

/** The validated, stored form of a claim's type-specific part. */
interface PreparedConfiguration {
  staticValue: string | null;
  conditionalRules: CustomClaim['conditionalRules'];
  dynamicExpression: string | null;
  externalConfig: ExternalConfig | null;
  validationRules: CustomClaim['validationRules'];
}

function byEvaluationOrder(a: CustomClaim, b: CustomClaim): number {
  return a.priority - b.priority || (a.claimKey < b.claimKey ? -1 : a.claimKey > b.claimKey ? 1 : 0);
}

/** jsonb does not keep key order, so values are compared in canonical JSON. */
function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** Custom claim definitions of the caller's organization, their tier rules, tests and previews. */
@Injectable()
export class ClaimsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly claims: ClaimsRepository,
    private readonly audit: AuditService,
    private readonly definitions: ClaimDefinitionsCache,
    private readonly fetcher: ExternalClaimFetcher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly plans: PlanService,
  ) {}

  /** Sorted by priority, then key. */
  async list(auth: OrgAuthContext): Promise<CustomClaim[]> {
    return (await this.claims.list(auth.organizationId)).sort(byEvaluationOrder);
  }

  async get(auth: OrgAuthContext, id: string): Promise<CustomClaim> {
    const claim = await this.claims.find(auth.organizationId, id);
    if (!claim) throw notFound('Claim');
    return claim;
  }

  /** A claim by UUID or by key (any casing, as keys are unique in any casing). */
  async getByRef(auth: OrgAuthContext, ref: string): Promise<CustomClaim> {
    if (UUID.test(ref)) return this.get(auth, ref);
    if (!CLAIM_KEY_PATTERN.test(ref)) throw invalidField('claimRef', 'must be a claim UUID or claim_key');
    const claim = await this.claims.findByKey(auth.organizationId, ref);
    if (!claim) throw notFound('Claim');
    return claim;
  }

  async create(auth: OrgAuthContext, input: ClaimInput): Promise<CustomClaim> {
    const configuration = this.prepareNew(input);
    return this.change(auth, async () => {
      const tier = await this.lockTier(auth.organizationId);
      this.assertTypeAvailable(tier, input.claimType);
      const isActive = input.isActive ?? true;
      if (isActive) await this.assertActiveSlots(auth.organizationId, tier, 1);
      const [priority] = await this.priorities(auth.organizationId, [input]);
      const claim = await this.insert(auth.organizationId, input, configuration, isActive, priority);
      return { result: claim, audits: [createdAudit(claim)] };
    });
  }

  /**
   * All-or-nothing: every item is validated first, then the whole batch is refused if it would
   * take the organization past its active-claim limit.
   */
  async bulkCreate(auth: OrgAuthContext, inputs: readonly ClaimInput[]): Promise<CustomClaim[]> {
    const problems = inputs.flatMap((input, index) =>
      this.newClaimProblems(input).map(({ field, message }) => ({ field: `[${index}].${field}`, message })),
    );
    if (problems.length > 0) throw invalidClaim(problems);
    const configurations = inputs.map((input) => this.storedConfiguration(input.claimType, input));
    const seen = new Set<string>();
    for (const { claimKey } of inputs) {
      if (seen.has(claimKey.toLowerCase())) throw duplicateClaimKey(claimKey);
      seen.add(claimKey.toLowerCase());
    }

    return this.change(auth, async () => {
      const tier = await this.lockTier(auth.organizationId);
      if (!tier.bulkClaims) throw bulkClaimsUnavailable(tier);
      for (const input of inputs) this.assertTypeAvailable(tier, input.claimType);
      const existing = await this.claims.existingKeys(auth.organizationId, [...seen]);
      if (existing.length > 0) throw duplicateClaimKey(existing[0]);
      const activating = inputs.filter((input) => input.isActive ?? true).length;
      if (activating > 0) await this.assertActiveSlots(auth.organizationId, tier, activating);
      const priorities = await this.priorities(auth.organizationId, inputs);
      const claims: CustomClaim[] = [];
      for (const [index, input] of inputs.entries()) {
        claims.push(
          await this.insert(
            auth.organizationId,
            input,
            configurations[index],
            input.isActive ?? true,
            priorities[index],
          ),
        );
      }
      return { result: claims, audits: claims.map((claim) => createdAudit(claim, { bulk: true })) };
    });
  }

  /**
   * Any subset of fields. Key and type cannot change (an unchanged value is accepted); of the
   * configuration fields only the one of the claim's type is applied, the others are ignored.
   */
  async update(auth: OrgAuthContext, id: string, patch: ClaimPatch): Promise<CustomClaim> {
    return this.change(auth, async () => {
      // Activation counts claims under the organization lock, taken before the claim's own.
      const tier = patch.isActive === true ? await this.lockTier(auth.organizationId) : null;
      const claim = await this.claims.find(auth.organizationId, id, { lock: true });
      if (!claim) throw notFound('Claim');
      const before = Object.assign(new CustomClaim(), claim);
      const field = CONFIGURATION_FIELD[claim.claimType];
      const problems = immutableFieldProblems(patch, claim);
      if (problems.length > 0) throw invalidClaim(problems);

      const definitionChanged =
        patch.dataType !== undefined || patch[field] !== undefined || patch.validationRules !== undefined;
      if (definitionChanged) {
        const configuration = this.prepare(
          {
            claimType: claim.claimType,
            dataType: patch.dataType ?? claim.dataType,
            [field]: patch[field] !== undefined ? patch[field] : claim[field],
            validationRules: patch.validationRules !== undefined ? patch.validationRules : claim.validationRules,
          },
          claim.externalConfig,
        );
        claim.dataType = patch.dataType ?? claim.dataType;
        Object.assign(claim, configuration);
      }
      if (patch.claimName !== undefined) claim.claimName = patch.claimName;
      if (patch.description !== undefined) claim.description = patch.description;
      if (patch.priority !== undefined) claim.priority = patch.priority;
      if (patch.isActive !== undefined && patch.isActive !== claim.isActive) {
        if (patch.isActive && tier) {
          this.assertTypeAvailable(tier, claim.claimType);
          await this.assertActiveSlots(auth.organizationId, tier, 1);
        }
        claim.isActive = patch.isActive;
      }
      const fields = changedFields(before, claim);
      if (fields.length === 0) return { result: before, audits: [] };
      await this.claims.save(auth.organizationId, claim);
      return {
        result: claim,
        audits: [{ action: 'claim.updated', resourceId: claim.id, metadata: { claimKey: claim.claimKey, fields } }],
      };
    });
  }

  async remove(auth: OrgAuthContext, id: string): Promise<void> {
    await this.change(auth, async () => {
      const removed = await this.claims.remove(auth.organizationId, id);
      if (!removed) throw notFound('Claim');
      return {
        result: undefined,
        audits: [
          {
            action: 'claim.deleted',
            resourceId: removed.id,
            metadata: { claimKey: removed.claimKey, claimType: removed.claimType },
          },
        ],
      };
    });
  }

  /**
   * Each listed claim's priority becomes its index in the list, in one statement. Entries that
   * name no claim of this organization are skipped; a claim listed twice keeps its first place.
   * `refs` are UUIDs, or on the console also claim keys.
   */
  async reorder(auth: OrgAuthContext, refs: readonly string[]): Promise<void> {
    await this.change(auth, async () => {
      const owned = await this.claims.list(auth.organizationId);
      const byRef = new Map<string, string>();
      for (const { id, claimKey } of owned) {
        byRef.set(id.toLowerCase(), id);
        byRef.set(claimKey.toLowerCase(), id);
      }
      const order = new Map<string, number>();
      refs.forEach((ref, index) => {
        const id = byRef.get(ref.toLowerCase());
        if (id !== undefined && !order.has(id)) order.set(id, index);
      });
      if (order.size === 0) return { result: undefined, audits: [] };
      await this.claims.setPriorities(auth.organizationId, order);
      return {
        result: undefined,
        audits: [{ action: 'claim.reordered', resourceId: null, metadata: { claimIds: [...order.keys()] } }],
      };
    });
  }

  /** Evaluates an unsaved claim; nothing is stored. `external` needs the Enterprise plan. */
  async test(auth: OrgAuthContext, input: ClaimTestInput, context: DeviceContext): Promise<ClaimTestResult> {
    const problems = [...foreignConfigurationProblems(input, input.claimType), ...this.definitionProblemsOf(input)];
    if (problems.length > 0) throw invalidClaim(problems);
    if (input.claimType === 'external') this.assertTypeAvailable(await this.tier(auth), 'external');
    const configuration = this.storedConfiguration(input.claimType, input);
    return this.evaluate(
      {
        id: randomUUID(),
        claimKey: input.claimKey ?? TEST_CLAIM_KEY,
        claimName: input.claimName ?? input.claimKey ?? TEST_CLAIM_KEY,
        claimType: input.claimType,
        dataType: input.dataType,
        priority: 0,
        isActive: true,
        ...configuration,
      },
      context,
    );
  }

  /** Evaluates a saved claim, active or not, for the given device. */
  async preview(auth: OrgAuthContext, claim: CustomClaim, context: DeviceContext): Promise<ClaimTestResult> {
    if (claim.claimType === 'external') this.assertTypeAvailable(await this.tier(auth), 'external');
    return this.evaluate(toClaimDefinition(claim), context);
  }

  /** Tests and previews always ask an external endpoint afresh and leave no cached value behind. */
  private async evaluate(definition: ClaimDefinition, context: DeviceContext): Promise<ClaimTestResult> {
    const uncached: ClaimDefinition = definition.externalConfig
      ? { ...definition, externalConfig: { ...definition.externalConfig, cacheSeconds: 0 } }
      : definition;
    return (await evaluateClaim(uncached, context, { fetcher: this.fetcher })).result;
  }

  private newClaimProblems(input: ClaimInput): FieldError[] {
    const problems = foreignConfigurationProblems(input, input.claimType);
    const external =
      input.claimType === 'external' ? restoreRedactedSecrets(input.externalConfig, null, problems) : undefined;
    problems.push(
      ...this.definitionProblemsOf(external === undefined ? input : { ...input, externalConfig: external }),
    );
    return problems;
  }

  private prepareNew(input: ClaimInput): PreparedConfiguration {
    const problems = this.newClaimProblems(input);
    if (problems.length > 0) throw invalidClaim(problems);
    return this.storedConfiguration(input.claimType, input);
  }

  /** Validates a complete definition (secrets restored from `previous`) and gives its stored form. */
  private prepare(
    definition: ClaimConfiguration & { claimType: ClaimType; dataType: ClaimDataType },
    previous: ExternalConfig | null,
  ): PreparedConfiguration {
    const problems: FieldError[] = [];
    const candidate =
      definition.claimType === 'external'
        ? { ...definition, externalConfig: restoreRedactedSecrets(definition.externalConfig, previous, problems) }
        : definition;
    problems.push(...this.definitionProblemsOf(candidate));
    if (problems.length > 0) throw invalidClaim(problems);
    return this.storedConfiguration(definition.claimType, candidate);
  }

  private definitionProblemsOf(
    definition: ClaimConfiguration & { claimType: ClaimType; dataType: ClaimDataType },
  ): FieldError[] {
    return definitionProblems(definition, this.config.webhookAllowPrivateNetworks);
  }

  private storedConfiguration(claimType: ClaimType, input: ClaimConfiguration): PreparedConfiguration {
    const field = CONFIGURATION_FIELD[claimType];
    return {
      staticValue: null,
      conditionalRules: null,
      dynamicExpression: null,
      externalConfig: null,
      [field]: normalizeConfiguration(claimType, input[field]),
      validationRules: normalizeValidationRules(input.validationRules),
    };
  }

  private async insert(
    organizationId: OrganizationId,
    input: ClaimInput,
    configuration: PreparedConfiguration,
    isActive: boolean,
    priority: number,
  ): Promise<CustomClaim> {
    const claim = await this.claims.insert(organizationId, {
      claimKey: input.claimKey,
      claimName: input.claimName,
      claimType: input.claimType,
      dataType: input.dataType,
      description: input.description ?? null,
      priority,
      isActive,
      ...configuration,
    });
    if (!claim) throw duplicateClaimKey(input.claimKey);
    return claim;
  }

  /** Given priorities are kept; claims without one go after the organization's last claim, in order. */
  private async priorities(
    organizationId: OrganizationId,
    inputs: readonly Pick<ClaimInput, 'priority'>[],
  ): Promise<number[]> {
    if (inputs.every((input) => input.priority !== undefined)) return inputs.map((input) => input.priority!);
    let following = await this.claims.nextPriority(organizationId);
    return inputs.map((input) => input.priority ?? following++);
  }

  /** Row-locks the organization so that concurrent claim writes count active claims one at a time. */
  private lockTier(organizationId: OrganizationId): Promise<TierDefinition> {
    return this.plans.planOf(organizationId, { lock: true });
  }

  private tier(auth: OrgAuthContext): Promise<TierDefinition> {
    return this.plans.planOf(auth.organizationId);
  }

  private assertTypeAvailable(tier: TierDefinition, claimType: ClaimType): void {
    const available =
      claimType === 'external'
        ? tier.externalClaims
        : (tier.allowedFormClaimTypes as readonly string[]).includes(claimType);
    if (!available) throw claimTypeUnavailable(tier, claimType);
  }

  /** Inactive claims do not count. Call with the organization locked. */
  private async assertActiveSlots(organizationId: OrganizationId, tier: TierDefinition, wanted: number): Promise<void> {
    const active = await this.claims.countActive(organizationId);
    if (active + wanted > tier.limits.maxCustomClaims) throw claimLimitReached(tier);
  }

  /** One unit of work per change, with its audit entries; this instance's token cache forgets once it commits. */
  private change<T>(auth: OrgAuthContext, work: () => Promise<{ result: T; audits: Audit[] }>): Promise<T> {
    return this.uow.run(async () => {
      const { result, audits } = await work();
      for (const entry of audits) {
        await this.audit.record(auth, { ...entry, organizationId: auth.organizationId, resourceType: 'claim' });
      }
      if (audits.length > 0) await this.uow.afterCommit(() => this.definitions.invalidate(auth.organizationId));
      return result;
    });
  }
}

function createdAudit(claim: CustomClaim, extra: Record<string, unknown> = {}): Audit {
  return {
    action: 'claim.created',
    resourceId: claim.id,
    metadata: { claimKey: claim.claimKey, claimType: claim.claimType, isActive: claim.isActive, ...extra },
  };
}

const COMPARED_FIELDS = [
  'claimName',
  'dataType',
  'description',
  'priority',
  'isActive',
  'staticValue',
  'conditionalRules',
  'dynamicExpression',
  'externalConfig',
  'validationRules',
] as const;

function changedFields(before: CustomClaim, after: CustomClaim): string[] {
  return COMPARED_FIELDS.filter((field) => !sameJson(before[field], after[field]));
}
