/**
 * Module boundaries, checked by `npm run lint` (scripts/check-boundaries.mjs runs these rules and
 * the feature-cycle check). The layers, from the bottom:
 *
 *   platform        src/common, src/config, src/database: shared kernel; imports no other folder
 *   infrastructure  src/audit, src/mail, src/metrics, src/rate-limit: imports the platform only
 *   features        every other folder under src/ (one folder per feature, subfolders included)
 *   composition     src/*.ts (app module, bootstrap), src/cli, src/openapi: wire or describe the
 *                   features, so they may import any file
 *
 * A feature imports the platform and infrastructure freely, and another feature only through that
 * feature's public surface:
 *   - its `*.module.ts`, `*.service.ts` (services and the organization lifecycle), `*.repository.ts`
 *     (its tables, organization id first) and `*.entity.ts` files, and an `index.ts` where it has one;
 *   - the files named in PUBLIC below, each an exported provider or a format other features must
 *     share, with the reason beside it.
 * Anything else (controllers, DTOs, helpers, jobs) is internal. Features never form a cycle,
 * however deep the import sits: scripts/check-boundaries.mjs checks the graph collapsed to the
 * top-level folders of src/ (dependency-cruiser's own `circular` works on files, `no-circular`).
 */

/** Files outside the naming pattern that a feature offers to others, by feature. */
const PUBLIC = {
  // The key format (prefixes, parsing) the access strategies authenticate with.
  'api-keys': ['api-key-secret.ts'],
  apps: [
    // Exported provider: maps an SDK request to its app (the access guard, attestation).
    'tenant-resolver.ts',
    // An app's Android identity as Admins send it: to POST /apps (apps) and PUT /apps/:id/android (attestation).
    'android-identity.dto.ts',
  ],
  'device-tokens': [
    // Exported provider: verifies device tokens for the access strategies and backend verification.
    'device-token-verifier.ts',
    // The claims the service sets in device tokens, which no custom claim may take.
    'token-claims.ts',
  ],
  // The settings in force and their pure checks, read by device details and the high-risk threshold.
  compliance: ['compliance-settings.ts', 'compliance-checks.ts'],
  devices: [
    // Exported provider: the deny set of device tokens and the revocation protocol every instance hears.
    'deny-set.ts',
    // The `sub` format of a device token minted from a debug token.
    'debug-subject.ts',
    // Pure risk scoring of device signals, used where attestations are verified.
    'risk-score.ts',
    // The domain events devices publish (attestation decides them; risk alerts and webhooks subscribe).
    'device-domain-events.ts',
  ],
  // Exported provider: the `subscription` claim of device tokens.
  entitlements: ['subscription-claims.ts'],
  feedback: [
    // Exported provider: staff notices of the support console, shared with support.
    'staff-notices.ts',
    // The `page`/`per` query of the console lists (feedback, support, release notes).
    'console-query.ts',
  ],
  // The one refusal of a feature the plan lacks, for callers that already hold the plan.
  organizations: ['organizations.exceptions.ts'],
  push: [
    // Exported provider: the outbox feedback and support announce pushes through.
    'push-outbox.ts',
    // The notice shape handed to that outbox.
    'apns-payload.ts',
  ],
  webhooks: [
    // Exported provider: the one way features announce webhook events.
    'webhook-events.ts',
    // The event catalogue: the names and payloads features announce.
    'webhook-event-catalog.ts',
  ],
};

const SHARED = '(common|config|database|audit|mail|metrics|rate-limit)';
const COMPOSITION = '(cli|openapi)';
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const publicFiles = Object.entries(PUBLIC).flatMap(([feature, files]) =>
  files.map((file) => `^src/${escape(feature)}/${escape(file)}$`),
);

/** Plain TypeScript: no Nest, no TypeORM (STYLE.md, pure logic). */
const PURE = [
  '^src/common/[^/]+\\.ts$',
  '^src/common/rules/',
  '^src/flags/evaluation/',
  '^src/claims/engine/',
  '^src/attestation/app-attest/',
  '^src/devices/risk-score\\.ts$',
  '^src/webhooks/webhook-(signing|retry-policy|event-catalog)\\.ts$',
  '^src/rate-limit/(sliding-window|limits)\\.ts$',
  '^src/billing/stripe-(signature|subscription)\\.ts$',
  '^src/entitlements/entitlement-state\\.ts$',
  '^src/risk-alerts/risk-alert-rule\\.ts$',
  '^src/compliance/compliance-checks\\.ts$',
  '^src/release-notes/release-note-delivery\\.ts$',
  '^src/push/apns-payload\\.ts$',
  '^src/organizations/slug\\.ts$',
  '^src/openfeature/ofrep-(context|evaluation)\\.ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-feature',
      comment:
        'src/common, src/config and src/database are the kernel every feature builds on: they import no feature.',
      severity: 'error',
      from: { path: '^src/(common|config|database)/' },
      to: { path: '^src/', pathNot: '^src/(common|config|database)/' },
    },
    {
      name: 'infrastructure-imports-platform-only',
      comment:
        'audit, mail, metrics and rate-limit serve every feature, so they import only the platform and themselves.',
      severity: 'error',
      from: { path: '^src/(audit|mail|metrics|rate-limit)/' },
      to: { path: '^src/', pathNot: ['^src/(common|config|database)/', '^src/$1/'] },
    },
    {
      name: 'no-feature-internals',
      comment:
        'A feature reaches another only through its public surface: *.module.ts, *.service.ts, *.repository.ts, *.entity.ts, index.ts, or a file in PUBLIC (.dependency-cruiser.cjs).',
      severity: 'error',
      from: { path: '^src/([^/]+)/', pathNot: [`^src/${SHARED}/`, `^src/${COMPOSITION}/`] },
      to: {
        path: '^src/[^/]+/',
        pathNot: [
          '^src/$1/',
          `^src/${SHARED}/`,
          '^src/[^/]+/.*\\.(module|service|repository|entity)\\.ts$',
          '^src/[^/]+/index\\.ts$',
          ...publicFiles,
        ],
      },
    },
    {
      name: 'pure-logic-has-no-framework',
      comment:
        'Pure logic (rule engines and their kernel in src/common/rules, scoring, signing, shared helpers in src/common/*.ts) imports no @nestjs/* or typeorm.',
      severity: 'error',
      from: { path: PURE },
      to: { path: '(^|/)node_modules/(@nestjs/|typeorm/)' },
    },
    {
      name: 'no-circular',
      comment:
        'No file imports itself back through others at run time (type-only imports aside); cycles between features, types included, are checked on folders in scripts/check-boundaries.mjs.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves to a file or an installed package.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Tests may import anything; the boundaries are about production wiring.
    exclude: { path: '\\.spec\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
