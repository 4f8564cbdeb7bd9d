import { ApiKey } from '../api-keys/api-key.entity.js';
import { App } from '../apps/app.entity.js';
import { AuditLog } from '../audit/audit-log.entity.js';
import { AuthToken } from '../auth/auth-token.entity.js';
import { Membership } from '../auth/membership.entity.js';
import { User } from '../auth/user.entity.js';
import { FeatureFlag, FlagOverride } from '../flags/flag.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Invite } from '../team/invite.entity.js';

/** Every entity, for data sources outside Nest (CLI, tools); Nest modules also register their own. */
export const entities = [
  App,
  FeatureFlag,
  FlagOverride,
  Organization,
  User,
  Membership,
  AuthToken,
  Invite,
  ApiKey,
  AuditLog,
];
