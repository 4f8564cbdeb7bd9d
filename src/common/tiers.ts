/**
 * The one table of plans: limits and feature booleans per tier. `/auth/me` shows it, and every
 * tier check reads it (DESIGN.md section 11). `null` means unlimited.
 */
export const TIERS = ['free', 'basic', 'professional', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

/** Raw values stored on organizations, including the legacy ones still recognised. */
export const RAW_TIERS = [...TIERS, 'growth', 'enterprise_plus'] as const;
export type RawTier = (typeof RAW_TIERS)[number];

export const RATE_LIMIT_BUCKETS = ['attest', 'challenge', 'flags', 'apikey'] as const;
export type RateLimitBucket = (typeof RATE_LIMIT_BUCKETS)[number];

export const FORM_CLAIM_TYPES = ['static', 'conditional', 'dynamic'] as const;
export type FormClaimType = (typeof FORM_CLAIM_TYPES)[number];

export interface TierLimits {
  maxApps: number | null;
  maxMAD: number | null;
  maxCustomClaims: number;
  maxWebhooks: number;
  maxSeats: number;
  maxFeatureFlags: number | null;
  maxEnvironments: number | null;
  maxRulesPerFlag: number | null;
  analyticsRetentionDays: number;
  rateLimit: number;
}

export interface TierFeatures {
  customClaims: boolean;
  riskScoring: boolean;
  webhooks: boolean;
  fraudDetection: boolean;
  complianceRules: boolean;
  deviceIntelligence: boolean;
  sso: boolean;
  onPremise: boolean;
  deviceTargeting: boolean;
  percentRollout: boolean;
  sseRealTime: boolean;
  flagScheduling: boolean;
  flagDependencies: boolean;
  rollback: boolean;
  approvalWorkflows: boolean;
}
export type TierFeature = keyof TierFeatures;

export interface TierDefinition {
  tier: Tier;
  display: string;
  /** Lower-case name of the usage endpoints. */
  usageName: 'free' | 'pro' | 'business' | 'enterprise';
  limits: TierLimits;
  features: TierFeatures;
  allowedFormClaimTypes: readonly FormClaimType[];
  /** Free counts flags per organization; paid plans per app. */
  flagLimitScope: 'organization' | 'app';
  /** Only Enterprise may define `external` claims. */
  externalClaims: boolean;
  bulkClaims: boolean;
  /** Requests per minute per organization and bucket. */
  rates: Record<RateLimitBucket, number>;
  /** Display price for the legacy usage shape. */
  price: string | null;
}

/** Which features each tier unlocks, cumulatively, from the tier named onwards. */
const FEATURES_FROM: Record<TierFeature, Tier> = {
  customClaims: 'free',
  riskScoring: 'free',
  webhooks: 'basic',
  deviceTargeting: 'basic',
  percentRollout: 'basic',
  rollback: 'basic',
  fraudDetection: 'professional',
  complianceRules: 'professional',
  deviceIntelligence: 'professional',
  sseRealTime: 'professional',
  flagScheduling: 'professional',
  flagDependencies: 'professional',
  sso: 'enterprise',
  onPremise: 'enterprise',
  approvalWorkflows: 'enterprise',
};

function featuresOf(tier: Tier): TierFeatures {
  const rank = TIERS.indexOf(tier);
  const entries = Object.entries(FEATURES_FROM).map(([feature, from]) => [feature, rank >= TIERS.indexOf(from)]);
  return Object.fromEntries(entries) as TierFeatures;
}

export const TIER_TABLE: Readonly<Record<Tier, TierDefinition>> = {
  free: {
    tier: 'free',
    display: 'Free',
    usageName: 'free',
    limits: {
      maxApps: 2,
      maxMAD: 1_000,
      maxCustomClaims: 1,
      maxWebhooks: 0,
      maxSeats: 1,
      maxFeatureFlags: 10,
      maxEnvironments: 3,
      maxRulesPerFlag: 0,
      analyticsRetentionDays: 7,
      rateLimit: 20,
    },
    features: featuresOf('free'),
    allowedFormClaimTypes: ['static'],
    flagLimitScope: 'organization',
    externalClaims: false,
    bulkClaims: false,
    rates: { attest: 30, challenge: 60, flags: 120, apikey: 30 },
    price: null,
  },
  basic: {
    tier: 'basic',
    display: 'Pro',
    usageName: 'pro',
    limits: {
      maxApps: 3,
      maxMAD: 25_000,
      maxCustomClaims: 5,
      maxWebhooks: 3,
      maxSeats: 3,
      maxFeatureFlags: 50,
      maxEnvironments: 3,
      maxRulesPerFlag: 5,
      analyticsRetentionDays: 30,
      rateLimit: 100,
    },
    features: featuresOf('basic'),
    allowedFormClaimTypes: FORM_CLAIM_TYPES,
    flagLimitScope: 'app',
    externalClaims: false,
    bulkClaims: true,
    rates: { attest: 500, challenge: 1_000, flags: 2_000, apikey: 300 },
    price: '$49/month',
  },
  professional: {
    tier: 'professional',
    display: 'Business',
    usageName: 'business',
    limits: {
      maxApps: 10,
      maxMAD: 250_000,
      maxCustomClaims: 10,
      maxWebhooks: 10,
      maxSeats: 10,
      maxFeatureFlags: 200,
      maxEnvironments: 10,
      maxRulesPerFlag: 20,
      analyticsRetentionDays: 90,
      rateLimit: 200,
    },
    features: featuresOf('professional'),
    allowedFormClaimTypes: FORM_CLAIM_TYPES,
    flagLimitScope: 'app',
    externalClaims: false,
    bulkClaims: true,
    rates: { attest: 2_000, challenge: 4_000, flags: 8_000, apikey: 1_000 },
    price: '$299/month',
  },
  enterprise: {
    tier: 'enterprise',
    display: 'Enterprise',
    usageName: 'enterprise',
    limits: {
      maxApps: null,
      maxMAD: null,
      maxCustomClaims: 20,
      maxWebhooks: 50,
      maxSeats: 50,
      maxFeatureFlags: null,
      maxEnvironments: null,
      maxRulesPerFlag: null,
      analyticsRetentionDays: 365,
      rateLimit: 1_000,
    },
    features: featuresOf('enterprise'),
    allowedFormClaimTypes: FORM_CLAIM_TYPES,
    flagLimitScope: 'app',
    externalClaims: true,
    bulkClaims: true,
    rates: { attest: 10_000, challenge: 20_000, flags: 40_000, apikey: 5_000 },
    price: 'Contact sales',
  },
};

/**
 * Plan rules that are not features of the entitlements response: the tier each holds from, and the
 * one wording of its refusal (each caller adds its own hint).
 */
export const PLAN_RULES = {
  /** Team administration by API key (`admin:team`): granting the scope, and using it, since a key can outlive a downgrade. */
  adminTeamScope: { from: 'enterprise', refusal: 'The admin:team scope works on the Enterprise plan only' },
} as const satisfies Record<string, { from: Tier; refusal: string }>;

export type PlanRule = keyof typeof PLAN_RULES;

/** Whether an organization on the raw tier `raw` may do what `rule` governs. */
export function planAllows(raw: string, rule: PlanRule): boolean {
  return TIERS.indexOf(tierOf(raw)) >= TIERS.indexOf(PLAN_RULES[rule].from);
}

/** Legacy raw values behave as the nearest current tier. */
export function tierOf(raw: string): Tier {
  switch (raw) {
    case 'growth':
      return 'basic';
    case 'enterprise_plus':
      return 'enterprise';
    default:
      return (TIERS as readonly string[]).includes(raw) ? (raw as Tier) : 'free';
  }
}

export function tierDefinition(raw: string): TierDefinition {
  return TIER_TABLE[tierOf(raw)];
}

export function isRawTier(value: string): value is RawTier {
  return (RAW_TIERS as readonly string[]).includes(value);
}

/** The display name of a raw value: legacy values show their own names. */
export function tierDisplayName(raw: string): string {
  if (raw === 'growth') return 'Growth';
  if (raw === 'enterprise_plus') return 'Enterprise Plus';
  return tierDefinition(raw).display;
}

/** The entitlements object of the auth response. */
export function entitlementsOf(raw: string) {
  const definition = tierDefinition(raw);
  return {
    tier: raw,
    tierDisplay: tierDisplayName(raw),
    limits: { ...definition.limits },
    features: { ...definition.features, allowedFormClaimTypes: [...definition.allowedFormClaimTypes] },
  };
}

/** The next tier up, for the legacy usage shape; null at the top. */
export function nextTier(raw: string): TierDefinition | null {
  const index = TIERS.indexOf(tierOf(raw));
  return index < TIERS.length - 1 ? TIER_TABLE[TIERS[index + 1]] : null;
}
