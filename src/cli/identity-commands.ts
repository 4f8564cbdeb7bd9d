import { isEmail } from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope } from '../common/access/access.decorator.js';
import { isRawTier, RAW_TIERS } from '../common/tiers.js';
import { API_KEY_TYPES, type ApiKeyType } from '../api-keys/api-key.entity.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../auth/passwords.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { UsersService } from '../users/users.service.js';
import type { CliArgs } from './cli-args.js';
import { CliError, type CliContext } from './cli-context.js';

function readTier(value: string | undefined): string {
  const tier = value ?? 'free';
  if (!isRawTier(tier)) throw new CliError(`--tier must be one of ${RAW_TIERS.join(', ')}`);
  return tier;
}

/** user:create: an active, verified user, optionally owning a new organization. */
export async function createUser(context: CliContext, args: CliArgs) {
  const email = args.required('email').trim();
  const password = args.required('password');
  const orgName = args.optional('org-name');
  const tier = readTier(args.optional('tier'));
  if (!isEmail(email)) throw new CliError('--email must be an e-mail address');
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new CliError(`--password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  const passwordHash = await hashPassword(password, context.config.bcryptRounds);
  const services = await context.services();
  const uow = services.get(UnitOfWork);
  const users = services.get(UsersService);
  const organizations = services.get(OrganizationsService);
  return uow.run(async () => {
    const userId = await users.createIfAbsent({
      email,
      passwordHash,
      verified: true,
      superAdmin: args.flag('super-admin'),
    });
    if (!userId) throw new CliError(`a user with the e-mail ${email} already exists`);
    if (!orgName) return { userId, organizationId: null, organizationSlug: null };
    const organization = await organizations.createWithOwner({ name: orgName, tier, ownerId: userId });
    return { userId, organizationId: organization.id, organizationSlug: organization.slug };
  });
}

/** org:set-tier: changes an organization's plan by hand (support, tests, on-premise). */
export async function setOrganizationTier(context: CliContext, args: CliArgs) {
  const slug = args.required('org');
  const tier = readTier(args.required('tier'));
  const services = await context.services();
  const uow = services.get(UnitOfWork);
  const organizations = services.get(OrganizationsService);
  const organizationId = await uow.run(async () => {
    const found = await organizations.findBySlug(slug);
    // The row locked, so the subscription on record is written back unchanged: only the plan changes.
    const current = found && (await organizations.find(found.id, { lock: true }));
    if (!current) throw new CliError(`no organization has the slug ${slug}`);
    await organizations.setSubscription(current.id, {
      tier,
      customerId: null,
      subscriptionId: current.providerSubscriptionId,
      periodEnd: current.currentPeriodEnd,
      anchorDay: current.billingAnchorDay,
    });
    return current.id;
  });
  return { organizationId, organizationSlug: slug, tier };
}

/**
 * apikey:create: a key for CI or a server integration; printed once. A personal key (`gpat_`)
 * acts as a user, so it needs `--user EMAIL`, a member of the organization.
 */
export async function createApiKey(context: CliContext, args: CliArgs) {
  const slug = args.required('org');
  const scopes = args
    .required('scopes')
    .split(',')
    .map((scope) => scope.trim())
    .filter(Boolean);
  const unknown = scopes.filter((scope) => !(API_KEY_SCOPES as readonly string[]).includes(scope));
  if (!scopes.length || unknown.length) {
    throw new CliError(`--scopes must be a comma-separated list of ${API_KEY_SCOPES.join(', ')}`);
  }
  const type = args.optional('type') ?? 'service';
  if (!(API_KEY_TYPES as readonly string[]).includes(type))
    throw new CliError(`--type must be one of ${API_KEY_TYPES.join(', ')}`);
  const email = args.optional('user');
  if (type === 'gpat' && !email) {
    throw new CliError('--user EMAIL is required for a gpat key: a personal key acts as a member of the organization');
  }
  if (type !== 'gpat' && email)
    throw new CliError('--user is only for gpat keys; aat and service keys act as the organization');
  const services = await context.services();
  const uow = services.get(UnitOfWork);
  const organizations = services.get(OrganizationsService);
  const organization = await organizations.findBySlug(slug);
  if (!organization) throw new CliError(`no organization has the slug ${slug}`);
  let userId: string | null = null;
  if (email) {
    const user = await services.get(UsersService).findByEmail(email);
    const member =
      user?.status === 'active' && (await organizations.roleOf(organization.id, user.id)) !== null ? user : null;
    if (!member) throw new CliError(`${email} is not an active member of ${slug}`);
    userId = member.id;
  }
  const apiKeys = services.get(ApiKeysService);
  try {
    const { key, record } = await uow.run(() =>
      apiKeys.issue(organization.id, userId, {
        name: args.optional('name') ?? 'Created with the management CLI',
        scopes: scopes as ApiKeyScope[],
        type: type as ApiKeyType,
      }),
    );
    return { key, id: record.id, prefix: record.prefix };
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
}
