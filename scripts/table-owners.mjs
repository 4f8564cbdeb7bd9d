/**
 * Which feature owns each table (STYLE.md, "A feature owns its tables"), read by the table check of
 * `npm run lint` (scripts/table-ownership.mjs). The owner is the top-level folder of src/ whose
 * code alone names the table in SQL or through its entity; every other feature goes through the
 * owner's exported service or repository, whose tenant methods take the organization id first.
 * Every table the migrations create is listed, and no other: the check fails on a table without an
 * owner.
 */
export const TABLE_OWNERS = {
  // The accounts of people (address, status, the password hash auth stores through UsersService),
  // below every feature that needs an address: auth, organizations, team, api-keys.
  users: 'users',
  // Credentials, sessions and sign-in (auth, auth/cli-login, auth/sso, auth/device-login).
  auth_tokens: 'auth',
  sessions: 'auth',
  cli_sessions: 'auth',
  sso_connections: 'auth',
  sso_domains: 'auth',
  sso_login_attempts: 'auth',
  sso_account_links: 'auth',
  sso_pending_links: 'auth',
  api_keys: 'api-keys',

  // Organizations, their members, and what an organization chooses to be told.
  organizations: 'organizations',
  memberships: 'organizations',
  notification_preferences: 'organizations',
  invites: 'team',

  apps: 'apps',
  android_identities: 'apps',

  // Attestation: challenges, debug tokens; device tokens: the keys they are signed with, those consumed.
  attestation_challenges: 'attestation',
  signing_keys: 'device-tokens',
  debug_tokens: 'attestation',
  consumed_tokens: 'device-tokens',
  devices: 'devices',
  device_events: 'devices',

  mad_devices: 'usage',
  mad_counters: 'usage',
  billing_events: 'billing',
  custom_claims: 'claims',
  compliance_settings: 'compliance',
  risk_alert_rules: 'risk-alerts',

  feature_flags: 'flags',
  feature_flag_overrides: 'flags',
  feature_flag_versions: 'flags',
  feature_flag_schedules: 'flags',
  feature_flag_change_requests: 'flags',
  feature_flag_protections: 'flags',

  webhook_endpoints: 'webhooks',
  webhook_events: 'webhooks',
  webhook_deliveries: 'webhooks',
  webhook_delivery_attempts: 'webhooks',
  entitlement_events: 'entitlements',
  subject_entitlements: 'entitlements',

  feature_requests: 'feedback',
  feature_request_votes: 'feedback',
  feature_request_comments: 'feedback',
  feedback_notifications: 'feedback',
  support_tickets: 'support',
  support_ticket_messages: 'support',
  release_notes: 'release-notes',
  release_note_views: 'release-notes',

  push_credentials: 'push',
  push_tokens: 'push',
  push_deliveries: 'push',

  audit_logs: 'audit',
  // Secrets the service generates once (session secret, SSO and push encryption keys), by key:
  // src/database/service-settings.ts is the one reader and writer.
  service_settings: 'database',
};

/**
 * Folders of src/ that are not features and may name any table:
 * - database: migrations run through it, and it owns the service-wide settings;
 * - cli: the operator's command line (`npm run cli`), a process of its own with its own data
 *   source and entity list (cli-entities.ts), acting across tenants as the operator; like the
 *   composition layer of .dependency-cruiser.cjs it wires features rather than being one.
 * Files directly under src/ (bootstrap) and test code (*.spec.ts, test/) are not scanned.
 */
export const NOT_FEATURES = ['database', 'cli'];

/**
 * Cross-feature queries not yet moved behind the owner, as `file: [tables]`. The check fails on any
 * query not listed here and on an entry that no longer matches (so the list only shrinks). Each
 * group says what stands in the way. Where the owner imports the feature that reads (so the reader
 * cannot import it back), the reader defines what it needs and the owner provides it when its
 * module starts: OrganizationSourcesService (organizations' pages read usage and apps) and
 * DenySetSourcesService (the device-token deny set reads apps and attestation's debug tokens).
 * Where the table sat above its readers, it moved below them (the users feature, decision 0060).
 * Empty since issue 18: every feature goes through the owner; an entry here is a step back.
 */
export const REMAINING = {};
