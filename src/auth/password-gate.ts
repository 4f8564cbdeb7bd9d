import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { invalidCredentials, type AppException } from '../common/errors/app-exception.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { emailSubject, ipSubject } from '../rate-limit/limits.js';
import { RateLimitService, rateLimitExceeded, type RateLimitDecision } from '../rate-limit/rate-limit.service.js';
import type { User } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import {
  DEVICE_COOKIE,
  DEVICE_COOKIE_MAX_AGE_MS,
  cookieValueOf,
  accountDeviceKey,
  deviceCookieAfterSignIn,
  deviceCookieKey,
  deviceTokenFor,
} from './device-cookie.js';
import { verifyPassword } from './passwords.js';
import { ServiceSecretsRepository } from './service-secrets.repository.js';
import { sessionSecret } from './session/session-setup.js';

const MINUTE = 60_000;

/**
 * The failure budgets of password sign-in, all sliding windows in the shared rate-limit store
 * (Redis across instances). Only wrong passwords (and unknown addresses) spend them.
 * - `account`: wrong passwords for one address from browsers it has not signed in from; past it
 *   the address answers exactly like a wrong password.
 * - `device`: wrong passwords from one browser that signed in to the account before (its device
 *   cookie); the same answer past it. Such a browser spends neither of the other two budgets.
 * - `ip`: wrong passwords from one client address across accounts (credential stuffing), then 429.
 */
export const SIGN_IN_BUDGETS = {
  account: { key: 'login-failures-account', limit: 10, windowMs: 15 * MINUTE },
  device: { key: 'login-failures-device', limit: 10, windowMs: 15 * MINUTE },
  ip: { key: 'login-failures-ip', limit: 30, windowMs: 15 * MINUTE },
} as const;

type BudgetName = keyof typeof SIGN_IN_BUDGETS;

export interface PasswordAttempt {
  readonly email: string;
  readonly password: string;
  /** The client address (`request.ip`, through TRUST_PROXY). */
  readonly clientIp: string | undefined;
  /** The `attestly.device` cookie the browser sent, if any. */
  readonly deviceCookie: string | undefined;
}

/**
 * The one gate every password check passes: POST /api/v1/auth/login and the device-login page's
 * sign-in (the CLI's browser step) call it through `AuthService.login`; nothing else compares a
 * password (a unit test holds `verifyPassword` to this file). It decides which failure budgets the
 * attempt is judged by, refuses an attempt whose budget is spent before looking at the password
 * (the same 401 whether the address exists and whether the password is right), checks the
 * password, and spends the budgets on a failure.
 */
@Injectable()
export class PasswordGate {
  private key: Buffer | null = null;

  constructor(
    private readonly secrets: ServiceSecretsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
    private readonly limits: RateLimitService,
  ) {}

  /** The account whose password this is; refuses with 401 (or 429 for a spent client address). */
  async check(attempt: PasswordAttempt, now = new Date()): Promise<User> {
    const user = await this.users.findByEmail(attempt.email, { withPassword: true });
    const known = user ? deviceTokenFor(await this.accountKey(user), attempt.deviceCookie, user.id, now) : null;
    const budgets: [BudgetName, string][] = known
      ? [['device', known.nonce]]
      : [
          ['account', emailSubject(attempt.email) ?? ''],
          ['ip', ipSubject(attempt.clientIp)],
        ];
    for (const [name, subject] of budgets) {
      const { limit, windowMs } = SIGN_IN_BUDGETS[name];
      const { decision } = await this.limits.peek(budgetKey(name, subject), windowMs, limit);
      if (!decision.allowed) throw refusal(name, decision);
    }
    const valid = await verifyPassword(attempt.password, user?.passwordHash ?? null, this.config.bcryptRounds);
    if (!user || !valid) {
      for (const [name, subject] of budgets) {
        const { limit, windowMs } = SIGN_IN_BUDGETS[name];
        await this.limits.increment(budgetKey(name, subject), windowMs, limit);
      }
      throw invalidCredentials();
    }
    return user;
  }

  /** The device cookie to set once `userId` has signed in: this browser now knows the account. */
  async deviceCookieAfterSignIn(
    user: Pick<User, 'id' | 'passwordHash'>,
    current: string | undefined,
    now = new Date(),
  ): Promise<string> {
    return deviceCookieAfterSignIn(await this.accountKey(user), current, user.id, now);
  }

  /** The account's device-token key, bound to its current password (accountDeviceKey). */
  private async accountKey(user: Pick<User, 'passwordHash'>): Promise<Buffer> {
    return accountDeviceKey(await this.signingKey(), user.passwordHash ?? '');
  }

  /** The attempt a sign-in request makes: its client address and device cookie with the credentials. */
  attemptOf(request: Request, email: string, password: string): PasswordAttempt {
    return {
      email,
      password,
      clientIp: request.ip,
      deviceCookie: cookieValueOf(request.headers.cookie, DEVICE_COOKIE),
    };
  }

  /** Gives the browser its device cookie, HttpOnly and sent like the session cookie. */
  setDeviceCookie(response: Response, value: string): void {
    response.cookie(DEVICE_COOKIE, value, {
      httpOnly: true,
      sameSite: this.config.sessionCookieSameSite,
      secure: this.config.baseUrl.startsWith('https:'),
      maxAge: DEVICE_COOKIE_MAX_AGE_MS,
      path: '/',
    });
  }

  private async signingKey(): Promise<Buffer> {
    this.key ??= deviceCookieKey(await sessionSecret(this.config, this.secrets));
    return this.key;
  }
}

function budgetKey(name: BudgetName, subject: string): string {
  return `${SIGN_IN_BUDGETS[name].key}:${subject || 'none'}`;
}

/** A spent account or browser budget reads exactly as a wrong password; a spent address is a 429. */
function refusal(name: BudgetName, decision: RateLimitDecision): AppException {
  return name === 'ip' ? rateLimitExceeded(decision) : invalidCredentials();
}
