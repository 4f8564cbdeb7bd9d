import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { SessionCaller } from '../common/access/auth-context.js';
import { trustOrganizationId, type OrganizationId } from '../common/access/tenant-id.js';
import { tierDefinition } from '../common/tiers.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { UsersService } from '../users/users.service.js';
import { admission, signInOf, speaksForAccount } from './session/session-admission.js';
import { SsoConnectionsRepository } from './sso/sso-connections.repository.js';
import { ssoEnforcedOn } from './sso/sso-enforcement.js';

export interface ResolvedSession {
  caller: SessionCaller;
  organizationId: OrganizationId | null;
}

/**
 * The signed-in user behind a session cookie, re-read on every request so a disabled account,
 * a removed membership or a deleted organization takes effect at once.
 */
@Injectable()
export class SessionResolver {
  constructor(
    private readonly users: UsersService,
    private readonly organizations: OrganizationsService,
    private readonly connections: SsoConnectionsRepository,
  ) {}

  async resolve(request: Request): Promise<ResolvedSession | null> {
    const session = (request as Partial<Pick<Request, 'session'>>).session;
    const userId = session?.userId;
    if (!session || !userId) return null;
    const named = session.organizationId ?? null;
    const user = await this.users.findById(userId);
    if (!user || user.status !== 'active' || user.emailVerifiedAt === null) return null;
    // The access layer establishes the tenant: the session names it, and only its row (this one
    // lookup), the membership and the admission below confirm it; what follows uses the row's id.
    const organization = named ? await this.organizations.find(trustOrganizationId(named)) : null;
    const role = organization ? await this.organizations.roleOf(organization.id, userId) : null;
    // The connection matters only where SSO could be enforced on this member (ssoEnforcedOn).
    const ssoEnforce =
      organization && role !== 'owner' && tierDefinition(organization.serviceTier).features.sso
        ? await this.connections.enforces(organization.id)
        : null;
    const signIn = signInOf(session);
    // The one gate of what a session may act in (session-admission.ts): every route a session
    // reaches, key minting and CLI approval included, sees only an organization it admits.
    const member =
      organization !== null &&
      admission(signIn, {
        organizationId: organization.id,
        member: role !== null,
        isSuperAdmin: user.isSuperAdmin,
        ssoEnforced: ssoEnforcedOn(ssoEnforce, organization.serviceTier, role),
      }).admitted;
    if (named && !member) {
      // The organization is gone, the membership was removed or the sign-in does not admit it
      // (any more): keep the session, drop the context.
      session.organizationId = null;
    }
    // A password session speaks for the account without a query; an SSO session asks which
    // organizations the account belongs to (the one rule: speaksForAccount).
    const forAccount =
      signIn.password ||
      speaksForAccount(
        signIn,
        (await this.organizations.listFor(userId)).map((organization) => organization.id),
      );
    return {
      caller: {
        kind: 'session',
        userId,
        email: user.email,
        isSuperAdmin: user.isSuperAdmin,
        role: member ? (role ?? 'owner') : null,
        speaksForAccount: forAccount,
      },
      organizationId: member ? organization.id : null,
    };
  }
}
