import { readFileSync } from 'node:fs';
import type { ApiClient } from './api-client.js';
import type { OptionKind } from './client-args.js';
import type { ClientContext } from './client-context.js';
import { ApiError, ClientError, EXIT, UsageError } from './client-errors.js';
import { removeCredentials, writeCredentials } from './credentials.js';
import { details, table, type CommandOutput } from './output.js';

export interface Command {
  readonly words: readonly string[];
  readonly usage: string;
  readonly summary: string;
  readonly options: Readonly<Record<string, OptionKind>>;
  /** More than the summary, for `attestly <command> --help`. */
  readonly details?: string;
  run(context: ClientContext): Promise<CommandOutput>;
}

interface CliSession {
  session_id: string;
  /** RFC 8628 user code, shown here and on the approval page (absent from older servers). */
  user_code?: string;
  verification_url: string;
  expires_in: number;
}

interface CliSessionPoll {
  status: 'pending' | 'active' | 'expired';
  api_key: string | null;
  email: string | null;
}

interface AppRecord {
  id: string;
  appName: string;
  /** Null with teamId for an Android-only app (shown as `-`). */
  bundleId: string | null;
  teamId: string | null;
  isActive: boolean;
  isPrimary: boolean;
}

interface FlagRule {
  id?: string;
  name: string;
  priority: number;
  isActive: boolean;
  conditions: { attribute: string; operator: string; value: string }[];
  rolloutPercentage: number | null;
  value: string;
}

interface FlagEnvironment {
  enabled: boolean;
  value: string;
  rules: FlagRule[];
}

interface FlagRecord {
  id: string;
  key: string;
  name: string;
  valueType: string;
  version: number;
  environments: Record<string, FlagEnvironment | undefined>;
}

interface ReleaseNote {
  id: string;
  appId: string;
  version: string;
  title: string;
  isPublished: boolean;
  publishedAt: string | null;
}

interface Usage {
  currentMAD: number;
  tierLimit: number | null;
  tierName: string;
  billingPeriodStart: string;
  billingPeriodEnd: string;
  usagePercent: number | null;
  daysUntilReset: number | null;
  resetDate: string | null;
}

const POLL_FIRST_DELAY_MS = 1_000;
const POLL_MAX_DELAY_MS = 5_000;
const FLAG_ENVIRONMENTS = ['production', 'staging', 'development'] as const;

const login: Command = {
  words: ['login'],
  usage: 'login [--no-browser]',
  summary: 'sign in through the browser and store an API key for this user',
  options: { 'no-browser': 'boolean' },
  async run(context) {
    const api = context.anonymous();
    const session = await api.call<CliSession>('POST', '/api/v1/auth/cli/sessions');
    context.notice(
      `To sign in, open this URL in a browser and approve the request:\n\n  ${session.verification_url}\n`,
    );
    if (session.user_code) {
      context.notice(`Your code: ${session.user_code}\nApprove only if the browser shows this same code.\n`);
    }
    if (!context.options.flag('no-browser') && context.io.openUrl(session.verification_url, context.io.env)) {
      context.notice('A browser window was opened for you.');
    }
    context.notice('Waiting for approval…');
    const result = await pollUntilDecided(context, api, session);
    const credentials = { baseUrl: api.baseUrl, apiKey: result.apiKey, email: result.email };
    writeCredentials(context.credentialsFile, credentials);
    return {
      json: { baseUrl: api.baseUrl, email: result.email, credentialsFile: context.credentialsFile },
      text: `Signed in to ${api.baseUrl} as ${result.email ?? 'unknown'}.\nThe API key is stored in ${context.credentialsFile} (readable by you only).`,
    };
  },
};

/** Polls with back-off (1 s, growing to 5 s) until the session is approved, denied or expired. */
async function pollUntilDecided(
  context: ClientContext,
  api: ApiClient,
  session: CliSession,
): Promise<{ apiKey: string; email: string | null }> {
  const deadline = Date.now() + session.expires_in * 1000 + POLL_MAX_DELAY_MS;
  let delay = POLL_FIRST_DELAY_MS;
  for (;;) {
    await context.io.sleep(delay);
    delay = Math.min(Math.round(delay * 1.5), POLL_MAX_DELAY_MS);
    let poll: CliSessionPoll;
    try {
      poll = await api.call<CliSessionPoll>(
        'GET',
        `/api/v1/auth/cli/sessions/${encodeURIComponent(session.session_id)}`,
      );
    } catch (error) {
      // Rate limits, restarts and network trouble pass; the deadline still holds.
      const transient = !(error instanceof ApiError) || error.status === 429 || error.status >= 500;
      if (transient && Date.now() < deadline) {
        delay = POLL_MAX_DELAY_MS;
        continue;
      }
      throw error;
    }
    if (poll.status === 'active') {
      if (!poll.api_key) {
        throw new ClientError(
          'This sign-in was already collected by another client. Run `attestly login` again.',
          EXIT.loginIncomplete,
          {
            code: 'already_collected',
          },
        );
      }
      return { apiKey: poll.api_key, email: poll.email };
    }
    if (poll.status === 'expired') {
      throw new ClientError(
        'The sign-in request was denied or has expired. Run `attestly login` again.',
        EXIT.loginIncomplete,
        {
          code: 'login_expired',
        },
      );
    }
    if (Date.now() >= deadline) {
      throw new ClientError('Timed out waiting for approval. Run `attestly login` again.', EXIT.loginIncomplete, {
        code: 'login_timeout',
      });
    }
  }
}

const logout: Command = {
  words: ['logout'],
  usage: 'logout',
  summary: 'forget the stored API key (it stays valid until revoked in the dashboard)',
  options: {},
  run(context) {
    const removed = removeCredentials(context.credentialsFile);
    return Promise.resolve({
      json: { removed, credentialsFile: context.credentialsFile },
      text: removed
        ? `Removed ${context.credentialsFile}. The key stays valid until an admin revokes it in the dashboard.`
        : 'No stored credentials.',
    });
  },
};

const whoami: Command = {
  words: ['whoami'],
  usage: 'whoami',
  summary: 'show who the API key acts for',
  options: {},
  async run(context) {
    const me = await context.authenticated({ route: 'GET /api/v1/auth/me' }, (api) =>
      api.call<{ email?: string | null; apiKeyPrefix?: string; user?: { email: string } }>('GET', '/api/v1/auth/me'),
    );
    const email = me.email ?? me.user?.email ?? null;
    const baseUrl = context.baseUrl();
    return {
      json: { baseUrl, email, apiKeyPrefix: me.apiKeyPrefix ?? null },
      text: details([
        ['Signed in as', email],
        ['API key', me.apiKeyPrefix ? `${me.apiKeyPrefix}…` : 'none (password session)'],
        ['Server', baseUrl],
      ]),
    };
  },
};

const appsList: Command = {
  words: ['apps', 'list'],
  usage: 'apps list',
  summary: "list the organization's apps",
  options: {},
  async run(context) {
    const apps = await context.authenticated({ route: 'GET /api/v1/apps' }, (api) =>
      api.call<AppRecord[]>('GET', '/api/v1/apps'),
    );
    return {
      json: apps,
      text: table(
        ['ID', 'NAME', 'BUNDLE ID', 'TEAM ID', 'ACTIVE', 'PRIMARY'],
        apps.map((app) => [app.id, app.appName, app.bundleId, app.teamId, app.isActive, app.isPrimary]),
        'No apps yet.',
      ),
    };
  },
};

const flagsList: Command = {
  words: ['flags', 'list'],
  usage: 'flags list --app ID',
  summary: "list an app's feature flags with their state and value per environment",
  options: { app: 'string' },
  async run(context) {
    const appId = context.options.required('app');
    const flags = await context.authenticated({ route: 'GET /api/v1/dashboard/apps/:appId/flags' }, (api) =>
      api.call<FlagRecord[]>('GET', `/api/v1/dashboard/apps/${encodeURIComponent(appId)}/flags`),
    );
    return {
      json: flags,
      text: table(
        ['ID', 'KEY', 'TYPE', ...FLAG_ENVIRONMENTS.map((environment) => environment.toUpperCase())],
        flags.map((flag) => [
          flag.id,
          flag.key,
          flag.valueType,
          ...FLAG_ENVIRONMENTS.map((environment) => environmentState(flag.environments[environment])),
        ]),
        'No flags yet.',
      ),
    };
  },
};

/** `on (value)` or `off (value)`: the value an environment serves when on, shortened for a table. */
function environmentState(environment: FlagEnvironment | undefined): string {
  if (!environment) return '-';
  const value = environment.value.length > 24 ? `${environment.value.slice(0, 23)}…` : environment.value;
  return `${environment.enabled ? 'on' : 'off'} (${value})`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A flag named by its id, or by its key within `--app`. */
async function findFlag(api: ApiClient, flag: string, appId: string | undefined): Promise<FlagRecord> {
  if (UUID.test(flag)) return api.call<FlagRecord>('GET', `/api/v1/dashboard/flags/${encodeURIComponent(flag)}`);
  if (!appId) throw new UsageError(`--flag ${flag} is a key: give the app it belongs to with --app`);
  const flags = await api.call<FlagRecord[]>('GET', `/api/v1/dashboard/apps/${encodeURIComponent(appId)}/flags`);
  const found = flags.find((candidate) => candidate.key === flag);
  if (!found) {
    throw new ClientError(`The app has no flag with key "${flag}"`, EXIT.failed, {
      code: 'flag_not_found',
      hint: `attestly flags list --app ${appId} shows its flags`,
    });
  }
  return found;
}

const flagsToggle: Command = {
  words: ['flags', 'toggle'],
  usage: 'flags toggle --flag KEY --app ID [--environment production] --on|--off',
  summary: 'turn a flag on or off in one environment, keeping its value and rules',
  details: '--flag takes the flag key (with --app) or the flag id.',
  options: { flag: 'string', app: 'string', environment: 'string', on: 'boolean', off: 'boolean' },
  async run(context) {
    const flagRef = context.options.required('flag');
    const appId = context.options.string('app');
    const environment = context.options.string('environment') ?? 'production';
    const on = context.options.flag('on');
    if (on === context.options.flag('off')) throw new UsageError('Give exactly one of --on and --off');
    const outcome = await context.authenticated(
      { route: 'PUT /api/v1/dashboard/flags/:flagId/environments/:environment' },
      async (api) => {
        const flag = await findFlag(api, flagRef, appId);
        const path = `/api/v1/dashboard/flags/${encodeURIComponent(flag.id)}`;
        const current = flag.environments[environment];
        if (!current) {
          throw new ClientError(
            `Flag ${flag.key} has no environment "${environment}" (it has ${Object.keys(flag.environments).join(', ')})`,
            EXIT.failed,
            { code: 'unknown_environment' },
          );
        }
        if (current.enabled === on) return { kind: 'unchanged' as const, flag };
        const answer = await api.send<FlagRecord | PendingChangeRequest>(
          'PUT',
          `${path}/environments/${encodeURIComponent(environment)}`,
          { enabled: on, value: current.value, rules: current.rules.map(ruleInput) },
        );
        // A protected environment answers 202 with a change request: nothing changed yet.
        if (answer.status === 202) {
          return { kind: 'pending' as const, flag, request: answer.body as PendingChangeRequest };
        }
        return { kind: 'changed' as const, flag: answer.body as FlagRecord };
      },
    );
    const state = on ? 'on' : 'off';
    if (outcome.kind === 'pending') {
      return {
        json: { changeRequest: outcome.request, changed: false },
        text:
          `Flag ${outcome.flag.key} needs approval in ${environment}: change request ${outcome.request.id} ` +
          `(${outcome.request.state}) asks to turn it ${state}; an Admin approves it in the dashboard.`,
      };
    }
    return {
      json: { ...outcome.flag, changed: outcome.kind === 'changed' },
      text:
        outcome.kind === 'changed'
          ? `Flag ${outcome.flag.key} is now ${state} in ${environment} (version ${outcome.flag.version}).`
          : `Flag ${outcome.flag.key} was already ${state} in ${environment}; nothing changed.`,
    };
  },
};

/** What a write to a protected environment answers (202): the change request that holds it. */
interface PendingChangeRequest {
  readonly id: string;
  readonly state: string;
}

/** A stored rule as the environment PUT takes it: the same rule, without its server-assigned id. */
function ruleInput(rule: FlagRule) {
  return {
    name: rule.name,
    priority: rule.priority,
    isActive: rule.isActive,
    conditions: rule.conditions.map(({ attribute, operator, value }) => ({ attribute, operator, value })),
    rolloutPercentage: rule.rolloutPercentage,
    value: rule.value,
  };
}

const releaseNotesCreate: Command = {
  words: ['release-notes', 'create'],
  usage: 'release-notes create --app ID --version V --title T (--body TEXT | --body-file PATH) [--publish]',
  summary: 'create a release note for an app version',
  options: {
    app: 'string',
    version: 'string',
    title: 'string',
    body: 'string',
    'body-file': 'string',
    publish: 'boolean',
  },
  async run(context) {
    const appId = context.options.required('app');
    const version = context.options.required('version');
    const title = context.options.required('title');
    const body = noteBody(context);
    const note = await context.authenticated({ route: 'POST /api/v1/org/release-notes' }, (api) =>
      api.call<ReleaseNote>('POST', '/api/v1/org/release-notes', {
        appId,
        version,
        title,
        body,
        ...(context.options.flag('publish') ? { isPublished: true } : {}),
      }),
    );
    return { json: note, text: `Created release note ${note.id}.\n${describeNote(note)}` };
  },
};

function noteBody(context: ClientContext): string {
  const text = context.options.string('body');
  const file = context.options.string('body-file');
  if ((text === undefined) === (file === undefined)) throw new UsageError('Give exactly one of --body and --body-file');
  if (text !== undefined) return text;
  try {
    return readFileSync(file!, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read --body-file ${file}: ${(error as Error).message}`);
  }
}

const releaseNotesPublish: Command = {
  words: ['release-notes', 'publish'],
  usage: 'release-notes publish --note ID',
  summary: 'publish a release note (idempotent)',
  options: { note: 'string' },
  async run(context) {
    const noteId = context.options.required('note');
    const note = await context.authenticated({ route: 'POST /api/v1/org/release-notes/:noteId/publish' }, (api) =>
      api.call<ReleaseNote>('POST', `/api/v1/org/release-notes/${encodeURIComponent(noteId)}/publish`),
    );
    return { json: note, text: `Published release note ${note.id}.\n${describeNote(note)}` };
  },
};

function describeNote(note: ReleaseNote): string {
  return details([
    ['App', note.appId],
    ['Version', note.version],
    ['Title', note.title],
    ['Published', note.isPublished ? (note.publishedAt ?? true) : false],
  ]);
}

const usage: Command = {
  words: ['usage'],
  usage: 'usage',
  summary: "show the organization's monthly active devices against its plan",
  options: {},
  async run(context) {
    const found = await context.authenticated({ route: 'GET /api/v1/org/usage' }, (api) =>
      api.call<Usage>('GET', '/api/v1/org/usage'),
    );
    const devices =
      found.tierLimit === null
        ? `${found.currentMAD} (no limit)`
        : `${found.currentMAD} of ${found.tierLimit} (${found.usagePercent ?? 0}%)`;
    return {
      json: found,
      text: details([
        ['Plan', found.tierName],
        ['Monthly active devices', devices],
        ['Billing period', `${found.billingPeriodStart.slice(0, 10)} to ${found.billingPeriodEnd.slice(0, 10)}`],
        ['Resets', found.resetDate ? `${found.resetDate} (in ${found.daysUntilReset} days)` : null],
      ]),
    };
  },
};

export const COMMANDS: readonly Command[] = [
  login,
  logout,
  whoami,
  appsList,
  flagsList,
  flagsToggle,
  releaseNotesCreate,
  releaseNotesPublish,
  usage,
];
