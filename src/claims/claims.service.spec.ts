import { describe, expect, it } from '@jest/globals';
import { RecordedAudit } from '../../test/fakes/audit-entries.js';
import { FakeClaimsRepository } from '../../test/fakes/claims.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { FixedPlans } from '../../test/fakes/plans.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import type { AppConfig } from '../config/app-config.js';
import type { ClaimDefinitionsCache } from './claim-definitions-cache.js';
import type { ClaimInput } from './claim-input.js';
import { ClaimsService } from './claims.service.js';
import type { ExternalClaimFetcher } from './engine/index.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';

function setup(plan = 'free') {
  const uow = new FakeUnitOfWork();
  const claims = new FakeClaimsRepository();
  const audit = new RecordedAudit();
  const plans = new FixedPlans().set(ORG, plan).set(OTHER_ORG, plan);
  const invalidated: string[] = [];
  const cache = { invalidate: (organizationId: string) => void invalidated.push(organizationId) };
  const service = new ClaimsService(
    uow.asUnitOfWork(),
    claims as never,
    audit.asAuditService(),
    cache as unknown as ClaimDefinitionsCache,
    {} as ExternalClaimFetcher,
    { webhookAllowPrivateNetworks: false } as AppConfig,
    plans.asPlanService(),
  );
  return { uow, claims, audit, plans, invalidated, service, auth: memberAuth(ORG, 'user-1', 'admin') };
}

const fixed = (claimKey: string, extra: Partial<ClaimInput> = {}): ClaimInput => ({
  claimKey,
  claimName: claimKey,
  claimType: 'static',
  dataType: 'string',
  staticValue: 'gold',
  ...extra,
});

describe('ClaimsService', () => {
  it('creates a claim with its audit entry; the token cache forgets the organization after commit', async () => {
    const { service, audit, invalidated, auth, uow } = setup();
    const claim = await uow.run(async () => {
      const created = await service.create(auth, fixed('tier'));
      expect(invalidated).toEqual([]);
      return created;
    });
    expect(claim).toMatchObject({ claimKey: 'tier', isActive: true, priority: 0, staticValue: 'gold' });
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'claim.created', resourceType: 'claim', resourceId: claim.id }),
    ]);
    expect(invalidated).toEqual([ORG]);
  });

  it('counts active claims against the plan: inactive ones are free, activating one counts', async () => {
    const { service, auth } = setup('free');
    await service.create(auth, fixed('first'));
    await expect(service.create(auth, fixed('second'))).rejects.toMatchObject({
      status: 403,
      code: 'claim_limit_reached',
    });
    const parked = await service.create(auth, fixed('parked', { isActive: false }));
    await expect(service.update(auth, parked.id, { isActive: true })).rejects.toMatchObject({
      code: 'claim_limit_reached',
    });
  });

  it('offers the claim types of the plan', async () => {
    const free = setup('free');
    await expect(
      free.service.create(free.auth, {
        ...fixed('dyn'),
        claimType: 'dynamic',
        staticValue: undefined,
        dynamicExpression: "'x'",
      }),
    ).rejects.toMatchObject({ code: 'claim_type_unavailable' });
  });

  it('refuses a key the organization has in any casing', async () => {
    const { service, auth } = setup('basic');
    await service.create(auth, fixed('tier'));
    await expect(service.create(auth, fixed('TIER'))).rejects.toMatchObject({ status: 409 });
  });

  it('creates in bulk from Basic on, all or nothing', async () => {
    const free = setup('free');
    await expect(free.service.bulkCreate(free.auth, [fixed('a')])).rejects.toMatchObject({
      code: 'bulk_claims_unavailable',
    });
    const basic = setup('basic');
    await basic.service.create(basic.auth, fixed('taken'));
    await expect(basic.service.bulkCreate(basic.auth, [fixed('new_one'), fixed('Taken')])).rejects.toMatchObject({
      status: 409,
    });
    expect([...basic.claims.claims.values()].map((claim) => claim.claimKey)).toEqual(['taken']);
    const created = await basic.service.bulkCreate(basic.auth, [fixed('b'), fixed('c')]);
    expect(created.map((claim) => [claim.claimKey, claim.priority])).toEqual([
      ['b', 1],
      ['c', 2],
    ]);
  });

  it('records no change for an update that changes nothing', async () => {
    const { service, audit, invalidated, auth } = setup();
    const claim = await service.create(auth, fixed('tier'));
    await service.update(auth, claim.id, { claimName: 'tier', staticValue: 'gold' });
    expect(audit.actions()).toEqual(['claim.created']);
    expect(invalidated).toEqual([ORG]);
    await service.update(auth, claim.id, { staticValue: 'silver' });
    expect(audit.entries.at(-1)).toMatchObject({ action: 'claim.updated', metadata: { fields: ['staticValue'] } });
  });

  it("answers another organization's claim as not found", async () => {
    const { service, auth } = setup();
    const claim = await service.create(auth, fixed('tier'));
    const stranger = memberAuth(OTHER_ORG, 'stranger', 'owner');
    await expect(service.get(stranger, claim.id)).rejects.toMatchObject({ status: 404 });
    await expect(service.getByRef(stranger, 'tier')).rejects.toMatchObject({ status: 404 });
    await expect(service.update(stranger, claim.id, { claimName: 'x' })).rejects.toMatchObject({ status: 404 });
    await expect(service.remove(stranger, claim.id)).rejects.toMatchObject({ status: 404 });
    expect((await service.get(auth, claim.id)).claimName).toBe('tier');
  });

  it('reorders by id or key, skipping what is not the organization’s', async () => {
    const { service, auth, audit } = setup('basic');
    const a = await service.create(auth, fixed('a'));
    const b = await service.create(auth, fixed('b'));
    await service.reorder(auth, ['B', 'unknown', a.id, 'b']);
    expect((await service.list(auth)).map((claim) => [claim.claimKey, claim.priority])).toEqual([
      ['b', 0],
      ['a', 2],
    ]);
    expect(audit.entries.at(-1)).toMatchObject({ action: 'claim.reordered', metadata: { claimIds: [b.id, a.id] } });
  });
});
