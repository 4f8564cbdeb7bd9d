import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.js';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { createLogger } from '../../src/common/logging/logger.js';
import { createTestDatabase, dropTestDatabase } from './database.js';
import { BackgroundTasks } from '../../src/common/scheduling/background-tasks.js';
import { checkRecordedResponses, recordJsonResponses } from '../support/openapi-responses.js';

export interface TestApp {
  readonly app: NestExpressApplication;
  readonly config: AppConfig & { databaseUrl: string };
  /** A supertest client for the running app, from this app's own client address. */
  http(): HttpClient;
  /** A client that keeps cookies between requests: one signed-in browser. */
  agent(): HttpClient;
  /** The client address this app's requests come from (X-Forwarded-For from loopback). */
  readonly clientIp: string;
  /** Runs SQL on the app's own database, for arranging and asserting state. */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  readonly dataSource: DataSource;
  readonly mailDir: string;
  /**
   * A second instance of the service on the same database (as behind a load balancer), closed
   * with this one.
   */
  startPeer(): Promise<TestApp>;
  close(): Promise<void>;
}

/**
 * Boots the real application, exactly as `npm start` builds it, on a database of its own.
 * `env` overrides configuration variables for this app.
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'attestly-test-data-'));
  const mailDir = join(dataDir, 'mail');
  const config = {
    ...loadConfig({
      DATA_DIR: dataDir,
      MAIL_DIR: mailDir,
      BASE_URL: 'http://127.0.0.1:3000',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      SERVICE_COMMIT: 'test-commit',
      SESSION_SECRET: 'test-session-secret-of-at-least-32-characters',
      BCRYPT_ROUNDS: '4',
      ...env,
    }),
    databaseUrl: database.url,
  };
  return bootInstance(config, mailDir, async () => {
    await dropTestDatabase(database.name);
    // The app's data directory (mails, files) goes with its database.
    rmSync(dataDir, { recursive: true, force: true });
  });
}

async function bootInstance(
  config: AppConfig & { databaseUrl: string },
  mailDir: string,
  cleanup: () => Promise<void>,
): Promise<TestApp> {
  const app = await createApp(config, createLogger(config));
  await app.init();
  // Every JSON answer is held to the OpenAPI document when the app closes (see close()).
  const recorded = recordJsonResponses(app);
  const dataSource = app.get(DataSource);
  // Each app gets its own client address, so per-IP limits never leak between test files that
  // share one Redis.
  const clientIp = `10.${randomOctet()}.${randomOctet()}.${randomOctet()}`;
  const peers: TestApp[] = [];
  return {
    app,
    config,
    dataSource,
    mailDir,
    clientIp,
    http: () => withClientIp(request(app.getHttpServer()), clientIp),
    agent: () => withClientIp(request.agent(app.getHttpServer()), clientIp),
    sql: (text, params) => dataSource.query(text, params),
    startPeer: async () => {
      const peer = await bootInstance(config, mailDir, () => Promise.resolve());
      peers.push(peer);
      return peer;
    },
    close: async () => {
      for (const peer of peers) await peer.close();
      const testFile = expect.getState().testPath ?? 'unknown';
      const problems = checkRecordedResponses(app, recorded, testFile.replace(/^.*\/test\//, 'test/'));
      await app.close();
      await cleanup();
      if (problems.length) {
        throw new Error(`Answers that do not match the OpenAPI document:\n${problems.slice(0, 30).join('\n')}`);
      }
    },
  };
}

type Methods = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';
export type HttpClient = Pick<ReturnType<typeof request.agent>, Methods>;

function withClientIp(client: ReturnType<typeof request>, ip: string): HttpClient {
  const wrap = (method: Methods) => (url: string) => client[method](url).set('X-Forwarded-For', ip);
  return {
    get: wrap('get'),
    post: wrap('post'),
    put: wrap('put'),
    patch: wrap('patch'),
    delete: wrap('delete'),
    head: wrap('head'),
    options: wrap('options'),
  };
}

function randomOctet(): number {
  return 1 + Math.floor(Math.random() * 250);
}

export interface SentMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  links: string[];
  createdAt: string;
}

/** The mails the app wrote to its mail directory, oldest first. */
export function sentMails(app: TestApp, to?: string): SentMail[] {
  let files: string[];
  try {
    files = readdirSync(app.mailDir)
      .filter((name) => name.endsWith('.json'))
      .sort();
  } catch {
    return [];
  }
  const mails = files.map((name) => JSON.parse(readFileSync(join(app.mailDir, name), 'utf8')) as SentMail);
  return to ? mails.filter((mail) => mail.to.toLowerCase() === to.toLowerCase()) : mails;
}

/** Waits until the work the app runs after answering (sign-up, password reset) has ended. */
export function afterAnswers(t: Pick<TestApp, 'app'>): Promise<void> {
  return t.app.get(BackgroundTasks).idle();
}
