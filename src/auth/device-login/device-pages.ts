import type { Response } from 'express';
import { randomSecret } from '../../common/crypto.js';
/**
 * The device-login pages, rendered as plain strings: no template engine, no script, no external
 * asset. Every interpolated value goes through `escapeHtml`; the one stylesheet carries the
 * response's CSP nonce.
 */

export interface OrganizationChoice {
  readonly name: string;
  readonly slug: string;
}

export type DevicePage =
  | {
      readonly kind: 'signIn';
      readonly sessionId: string;
      readonly email?: string;
      /** The address last tried with "Sign in with SSO". */
      readonly ssoEmail?: string;
      readonly error?: string;
    }
  | {
      readonly kind: 'confirm';
      readonly sessionId: string;
      readonly csrfToken: string;
      readonly email: string;
      readonly organization: OrganizationChoice;
      /** The code the terminal shows, to compare before approving. */
      readonly userCode: string | null;
      readonly expiresAt: Date;
      readonly now: Date;
      /** The caller's other organizations, offered as a switch before approving. */
      readonly otherOrganizations: readonly OrganizationChoice[];
    }
  | {
      readonly kind: 'chooseOrganization';
      readonly sessionId: string;
      readonly csrfToken: string;
      readonly email: string;
      readonly organizations: readonly OrganizationChoice[];
    }
  | {
      readonly kind: 'message';
      readonly tone: 'success' | 'error' | 'info';
      readonly title: string;
      readonly message: string;
    }
  | {
      /**
       * A same-origin step the browser follows by itself (and by the link without it). A form's
       * post cannot redirect to an identity provider: the page's `form-action 'self'` covers the
       * whole redirect chain of a submission, but not a navigation.
       */
      readonly kind: 'continue';
      readonly title: string;
      readonly message: string;
      /** A path of this service, or the identity provider's authorization URL (SSO start). */
      readonly path: string;
    }
  | {
      /**
       * SSO start reached from another site: nothing starts until the person asks for it here (a
       * same-origin post), so a foreign page cannot sign a browser in through a provider.
       */
      readonly kind: 'ssoConfirm';
      readonly organizationName: string;
      readonly fields: Readonly<Record<string, string>>;
    }
  | {
      /** The provider vouched for an address whose account has not accepted it: the owner links it with the password. */
      readonly kind: 'ssoLink';
      readonly organizationName: string;
      readonly email: string;
      readonly linkToken: string;
      readonly error?: string;
    };

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]);
}

/** The Content-Security-Policy of a page whose only resource is its nonce-bearing style element. */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function renderDevicePage(page: DevicePage, nonce: string): string {
  switch (page.kind) {
    case 'signIn':
      return layout('Sign in to approve', nonce, signIn(page));
    case 'confirm':
      return layout('Approve command-line sign-in', nonce, confirm(page));
    case 'chooseOrganization':
      return layout('Choose an organization', nonce, chooseOrganization(page));
    case 'message':
      return layout(page.title, nonce, `<p class="${page.tone}" role="status">${escapeHtml(page.message)}</p>`);
    case 'continue':
      return layout(
        page.title,
        nonce,
        `<p role="status">${escapeHtml(page.message)}</p>
<p><a id="continue" href="${escapeHtml(page.path)}">Continue</a></p>`,
        `<meta http-equiv="refresh" content="0;url=${escapeHtml(page.path)}">`,
      );
    case 'ssoConfirm':
      return layout(
        'Continue to single sign-on?',
        nonce,
        `<p>Sign in to <strong id="organization">${escapeHtml(page.organizationName)}</strong> with its identity provider? Continue only if you started this sign-in yourself.</p>
<form method="post" action="/sso/start">
  ${Object.entries(page.fields)
    .map(([name, value]) => hidden(name, value))
    .join('')}
  <button type="submit" class="primary">Continue</button>
</form>`,
      );
    case 'ssoLink':
      return layout(
        'Link your account',
        nonce,
        `<p>The identity provider of <strong id="organization">${escapeHtml(page.organizationName)}</strong> signed you in as <strong id="email">${escapeHtml(page.email)}</strong>, which already has an Attestly account. To let this provider sign the account in from now on, confirm with the account's password.</p>
${page.error ? `<p class="error" role="alert">${escapeHtml(page.error)}</p>` : ''}
<form method="post" action="/sso/link">
  ${hidden('link_token', page.linkToken)}
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit" class="primary">Link and sign in</button>
</form>
<p class="muted">Not your account, or no password? Close this window: nothing was changed.</p>`,
      );
  }
}

function signIn(page: Extract<DevicePage, { kind: 'signIn' }>): string {
  return `<p>A command-line client asks to sign in to Attestly. Sign in to review the request.</p>
${page.error ? `<p class="error" role="alert">${escapeHtml(page.error)}</p>` : ''}
<form method="post" action="/device/login">
  ${hidden('session_id', page.sessionId)}
  <label>E-mail <input type="email" name="email" autocomplete="username" required value="${escapeHtml(page.email ?? '')}"></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
</form>
<form method="post" action="/device/sso" class="sso">
  ${hidden('session_id', page.sessionId)}
  <label>Work e-mail for single sign-on <input type="email" name="sso_email" autocomplete="username" required value="${escapeHtml(page.ssoEmail ?? '')}"></label>
  <button type="submit">Sign in with SSO</button>
</form>`;
}

function confirm(page: Extract<DevicePage, { kind: 'confirm' }>): string {
  const minutes = Math.max(0, Math.ceil((page.expiresAt.getTime() - page.now.getTime()) / 60_000));
  const switcher = page.otherOrganizations.length
    ? `<details><summary>Approve for another organization</summary>
${organizationButtons(page.sessionId, page.csrfToken, page.otherOrganizations)}
</details>`
    : '';
  return `<p>A command-line client asks for an API key acting as you.</p>
<dl>
${
  page.userCode
    ? `  <dt>Code</dt><dd id="user-code" class="code">${escapeHtml(page.userCode)}</dd>
`
    : ''
}  <dt>Organization</dt><dd id="organization">${escapeHtml(page.organization.name)} <span class="muted">(${escapeHtml(page.organization.slug)})</span></dd>
  <dt>Signed in as</dt><dd id="email">${escapeHtml(page.email)}</dd>
  <dt>Request expires</dt><dd id="expires"><time datetime="${page.expiresAt.toISOString()}">${formatUtc(page.expiresAt)}</time> (in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'})</dd>
</dl>
<p class="warning">Approve only if you started this sign-in yourself, in your own terminal, just now${page.userCode ? ', and the terminal shows the same code' : ''}.</p>
<div class="actions">
  <form method="post" action="/device/approve">${hidden('session_id', page.sessionId)}${hidden('csrf_token', page.csrfToken)}<button type="submit" class="primary">Approve</button></form>
  <form method="post" action="/device/deny">${hidden('session_id', page.sessionId)}${hidden('csrf_token', page.csrfToken)}<button type="submit">Deny</button></form>
</div>
${switcher}
${signOut(page.sessionId, page.csrfToken, page.email)}`;
}

function chooseOrganization(page: Extract<DevicePage, { kind: 'chooseOrganization' }>): string {
  if (!page.organizations.length) {
    return `<p class="error" role="alert">No organization is selected for ${escapeHtml(page.email)}. Select one in the dashboard (or ask to be invited to one), then reload this page.</p>
${signOut(page.sessionId, page.csrfToken, page.email)}`;
  }
  return `<p>Choose the organization the command-line client will act for.</p>
${organizationButtons(page.sessionId, page.csrfToken, page.organizations)}
${signOut(page.sessionId, page.csrfToken, page.email)}`;
}

function organizationButtons(
  sessionId: string,
  csrfToken: string,
  organizations: readonly OrganizationChoice[],
): string {
  return organizations
    .map(
      (organization) =>
        `<form method="post" action="/device/organization">${hidden('session_id', sessionId)}${hidden('csrf_token', csrfToken)}${hidden('slug', organization.slug)}<button type="submit">Use ${escapeHtml(organization.name)}</button></form>`,
    )
    .join('\n');
}

function signOut(sessionId: string, csrfToken: string, email: string): string {
  return `<form method="post" action="/device/logout" class="signout">${hidden('session_id', sessionId)}${hidden('csrf_token', csrfToken)}<button type="submit" class="link">Not ${escapeHtml(email)}? Sign out</button></form>`;
}

function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
}

function formatUtc(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function layout(title: string, nonce: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">${head ? `\n${head}` : ''}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Attestly</title>
<style nonce="${escapeHtml(nonce)}">${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:28rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin-top:0}
label{display:block;margin:.75rem 0}
input[type=email],input[type=password]{display:block;width:100%;box-sizing:border-box;padding:.5rem;margin-top:.25rem;font:inherit}
button{font:inherit;padding:.5rem 1rem;border-radius:.35rem;border:1px solid #9aa3b2;background:#fff;cursor:pointer;margin:.25rem 0}
button.primary,form[action="/device/login"] button{background:#2453d6;border-color:#2453d6;color:#fff}
button.link{border:none;background:none;color:#2453d6;padding:0;text-decoration:underline}
.actions{display:flex;gap:.75rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}
dt{color:#5b6475}
dd{margin:0}
.muted{color:#5b6475}
.code{font-family:ui-monospace,monospace;font-size:1.4em;letter-spacing:.12em}
.error{color:#a21c1c}
.success{color:#17682e}
.warning{background:#fff6db;padding:.5rem .75rem;border-radius:.35rem}
.signout{margin-top:1.5rem}
.sso{margin-top:1.5rem;padding-top:1rem;border-top:1px solid #e2e5ea}
`;

/**
 * Answers one of the server-rendered pages with its CSP nonce. Referrer-Policy is same-origin, not
 * no-referrer: with it, browsers send `Origin: null` on the forms' posts, which the Origin checks
 * refuse. The URL's session id still never leaves the site.
 */
export function sendPage(response: Response, status: number, page: DevicePage): void {
  const nonce = randomSecret(16);
  response
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': contentSecurityPolicy(nonce),
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'same-origin',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
    })
    .send(renderDevicePage(page, nonce));
}
