import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { randomSecret, safeEqual, sha256Hex } from '../../common/crypto.js';
import { saveSession } from '../../common/http/session-cookie.js';
import type { OrganizationId } from '../../common/access/tenant-id.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import type { OrganizationChoice } from './device-pages.js';
import { CliSessionsRepository } from '../cli-login/cli-sessions.repository.js';

declare module 'express-session' {
  interface SessionData {
    /** Synchronizer token of the device-login forms, kept for the session's lifetime. */
    deviceCsrfToken: string;
  }
}

export interface CliSessionView {
  readonly status: 'pending' | 'approved' | 'active' | 'denied';
  readonly expiresAt: Date;
  readonly expired: boolean;
  /** The code the CLI shows in the terminal (null for sessions created before codes existed). */
  readonly userCode: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The `session_id` of a verification URL or form, when it is a UUID at all. */
export function cliSessionIdOf(value: unknown): string | null {
  return typeof value === 'string' && UUID.test(value) ? value : null;
}

/** What the device-login page shows and checks; the decision itself is CliSessionsService's. */
@Injectable()
export class DeviceLoginService {
  constructor(
    private readonly sessions: CliSessionsRepository,
    private readonly organizations: OrganizationsService,
  ) {}

  async cliSession(sessionId: string): Promise<CliSessionView | null> {
    const session = await this.sessions.find(sha256Hex(sessionId));
    return session
      ? { status: session.status, expiresAt: session.expiresAt, expired: session.expired, userCode: session.userCode }
      : null;
  }

  async organization(organizationId: OrganizationId): Promise<OrganizationChoice | null> {
    const organization = await this.organizations.find(organizationId);
    return organization ? { name: organization.name, slug: organization.slug } : null;
  }

  /** The session's form token, created (and stored with the session) on first use. */
  async csrfToken(request: Request): Promise<string> {
    const existing = request.session.deviceCsrfToken;
    if (existing) return existing;
    request.session.deviceCsrfToken = randomSecret(32);
    await saveSession(request);
    return request.session.deviceCsrfToken;
  }

  validCsrfToken(request: Request, submitted: unknown): boolean {
    const expected = (request as Partial<Pick<Request, 'session'>>).session?.deviceCsrfToken;
    return typeof submitted === 'string' && !!expected && safeEqual(submitted, expected);
  }
}
