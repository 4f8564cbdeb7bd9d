import { ApiKey } from '../api-keys/api-key.entity.js';
import { Membership } from '../organizations/membership.entity.js';
import { Organization } from '../organizations/organization.entity.js';

/** The entities the CLI's commands reach through the features' services (the CLI runs outside Nest). */
export const cliEntities = [Organization, Membership, ApiKey];
