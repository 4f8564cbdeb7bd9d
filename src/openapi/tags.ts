/** A group of operations in the document. */
export interface OpenApiTag {
  readonly name: string;
  readonly description: string;
}

const tag = (name: string, description: string): OpenApiTag => ({ name, description });

const AUTH = tag('Authentication', 'Dashboard sign-in with a cookie session, sign-up, password and e-mail flows.');
const CLI_LOGIN = tag(
  'CLI login',
  'The device-login flow of the command-line client: a session the CLI polls and a signed-in user approves.',
);
const ORGANIZATION = tag(
  'Organization',
  "Administration of the session's active organization: settings, notifications, billing summary, audit log, deletion.",
);
const TEAM = tag('Team', 'Members of the organization and invitations to it.');
const API_KEYS = tag('API keys', 'Organization API keys; a key is shown once, when it is created or rotated.');
const APPS = tag(
  'Apps',
  "The organization's apps, identified by Bundle ID and Team ID (iOS) and by package name (Android), and their statistics.",
);
const CLAIMS = tag(
  'Claims',
  'Custom claims added to the attestation tokens: static values, conditional rules or an external source.',
);
const FLAGS = tag('Feature flags', 'Flag definitions per app, their environments, history and per-device overrides.');
const SDK = tag(
  'SDK',
  'What the app on the device calls, naming the app with X-Bundle-ID and X-Team-ID (iOS) or X-Package-Name (Android): attestation, flag values, ' +
    'feedback, support tickets and release notes.',
);
const OPENFEATURE = tag(
  'OpenFeature',
  "OpenFeature's Remote Evaluation Protocol (OFREP): community OpenFeature providers evaluate the app's flags, with the SDK's credentials.",
);
const FEEDBACK = tag('Feedback', 'Feature requests from the apps, with votes and staff comments (snake_case).');
const SUPPORT = tag('Support', 'Support tickets from the apps and staff replies (snake_case).');
const DEVICES = tag('Devices and analytics', 'Attested devices, blocking, and the attestation event log.');
const WEBHOOKS = tag('Webhooks', 'Signed HTTP callbacks for events of the organization, with delivery history.');
const RELEASE_NOTES = tag('Release notes', 'Notes per app version, published to the devices that update.');
const USAGE = tag('Usage', "The organization's consumption against its plan's limits.");
const BILLING = tag('Billing', 'The Stripe customer portal and the Stripe webhook.');
const COMPLIANCE = tag('Compliance', 'Minimum OS and app versions and the risk ceiling devices must meet.');
const RISK_ALERTS = tag('Risk alerts', 'Rules that raise an alert when devices cross a risk threshold.');
const ENTITLEMENTS = tag('Entitlements', 'Subscription events from the app maker, which set the claims of a subject.');
const SSO = tag(
  'Single sign-on',
  "OpenID Connect sign-in through the organization's identity provider, for the dashboard and the CLI's device login.",
);
const PUSH = tag('Push', "APNs credentials of an app and the devices' push tokens.");
const TOKENS = tag('Tokens', "A backend's check of a device token, consumed once.");
const OPERATIONS = tag(
  'Operations',
  'Health and readiness probes, Prometheus metrics, the token keys and this document; no credentials.',
);

/** Each controller's tag; a controller missing here fails the OpenAPI document's test. */
export const CONTROLLER_TAGS: Readonly<Record<string, OpenApiTag>> = {
  AccountController: ORGANIZATION,
  AnalyticsController: DEVICES,
  ApiKeysController: API_KEYS,
  AppsController: APPS,
  AttestationController: SDK,
  AuthController: AUTH,
  BillingController: BILLING,
  ClaimsController: CLAIMS,
  ChangeRequestsController: FLAGS,
  CliSessionsController: CLI_LOGIN,
  ComplianceController: COMPLIANCE,
  ConsoleClaimsController: CLAIMS,
  DebugTokensController: APPS,
  AndroidIdentityController: APPS,
  DeviceLoginController: CLI_LOGIN,
  DevicesController: DEVICES,
  EntitlementsController: ENTITLEMENTS,
  FeedbackController: FEEDBACK,
  FlagsController: FLAGS,
  HealthController: OPERATIONS,
  InvitesController: TEAM,
  JwksController: OPERATIONS,
  MembersController: TEAM,
  MetricsController: OPERATIONS,
  OpenApiController: OPERATIONS,
  OpenFeatureController: OPENFEATURE,
  OrganizationController: ORGANIZATION,
  PushCredentialsController: PUSH,
  PushTokensController: PUSH,
  ReleaseNotesController: RELEASE_NOTES,
  RiskAlertsController: RISK_ALERTS,
  SdkFeedbackController: SDK,
  SdkFlagsController: SDK,
  SdkReleaseNotesController: SDK,
  SdkSupportController: SDK,
  SsoConnectionsController: SSO,
  SsoDeviceLoginController: SSO,
  SsoDomainsController: SSO,
  SsoSignInController: SSO,
  SupportController: SUPPORT,
  TokensController: TOKENS,
  UsageController: USAGE,
  WebhooksController: WEBHOOKS,
};
