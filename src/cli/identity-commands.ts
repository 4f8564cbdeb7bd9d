import { isEmail } from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope } from '../common/access/access.decorator.js';
import { isRawTier, RAW_TIERS } from '../common/tiers.js';
import { API_KEY_TYPES, type ApiKeyType } from '../api-keys/api-key.entity.js';
import { ApiKeysRepository } from '../api-keys/api-keys.repository.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditService } from '../audit/audit.service.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../auth/passwords.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { AccountLifecycleService } from '../users/account-lifecycle.service.js';
import { UsersService } from '../users/users.service.js';
import { PlanService } from '../organizations/plan.service.js';
import { queryRows } from '../database/sql.js';
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
  const dataSource = await context.dataSource();
  return dataSource.transaction(async (manager) => {
    const rows: { id: string }[] = await manager.query(
      `INSERT INTO users (email, password_hash, status, email_verified_at, is_super_admin)
       VALUES ($1, $2, 'active', now(), $3) ON CONFLICT ((lower(email))) DO NOTHING RETURNING id`,
      [email, passwordHash, args.flag('super-admin')],
    );
    if (!rows.length) throw new CliError(`a user with the e-mail ${email} already exists`);
    const userId = rows[0].id;
    if (!orgName) return { userId, organizationId: null, organizationSlug: null };
    const organization = await organizationsOf(dataSource).createWithOwner(manager, {
      name: orgName,
      tier,
      ownerId: userId,
    });
    return { userId, organizationId: organization.id, organizationSlug: organization.slug };
  });
}

/** org:set-tier: changes an organization's plan by hand (support, tests, on-premise). */
export async function setOrganizationTier(context: CliContext, args: CliArgs) {
  const slug = args.required('org');
  const tier = readTier(args.required('tier'));
  const dataSource = await context.dataSource();
  const rows = await queryRows<{ id: string }>(
    dataSource,
    `UPDATE organizations SET service_tier = $2, updated_at = now() WHERE slug = $1 RETURNING id`,
    [slug, tier],
  );
  if (!rows.length) throw new CliError(`no organization has the slug ${slug}`);
  return { organizationId: rows[0].id, organizationSlug: slug, tier };
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
  const dataSource = await context.dataSource();
  const rows: { id: string }[] = await dataSource.query(`SELECT id FROM organizations WHERE slug = $1`, [slug]);
  if (!rows.length) throw new CliError(`no organization has the slug ${slug}`);
  let userId: string | null = null;
  if (email) {
    const members: { id: string }[] = await dataSource.query(
      `SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id AND m.organization_id = $2
        WHERE lower(u.email) = lower($1) AND u.status = 'active'`,
      [email, rows[0].id],
    );
    if (!members.length) throw new CliError(`${email} is not an active member of ${slug}`);
    userId = members[0].id;
  }
  const unitOfWork = new UnitOfWork(dataSource);
  const organizations = organizationsOf(dataSource);
  const service = new ApiKeysService(
    unitOfWork,
    new ApiKeysRepository(unitOfWork, dataSource),
    new AuditService(new AuditRepository(unitOfWork)),
    context.config,
    new PlanService(organizations),
    organizations,
    new UsersService(dataSource, new AccountLifecycleService()),
  );
  try {
    const { key, record } = await dataSource.transaction((manager) =>
      service.issue(manager, rows[0].id, userId, {
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

/** The organizations feature's service as the commands use it (creating an organization, its plan). */
function organizationsOf(dataSource: Awaited<ReturnType<CliContext['dataSource']>>): OrganizationsService {
  return new OrganizationsService(
    new OrganizationsRepository(new UnitOfWork(dataSource)),
    new UsersService(dataSource, new AccountLifecycleService()),
  );
}
