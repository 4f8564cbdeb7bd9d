import { Injectable } from '@nestjs/common';
import type { AppId } from '../common/access/tenant-id.js';
import { FlagStore, FLAG_KEY_PATTERN } from '../flags/index.js';
import { isRequestError, parseOfrepRequest, type OfrepCaller, type OfrepRequestError } from './ofrep-context.js';
import {
  evaluateOfrep,
  evaluateOfrepAll,
  findFlag,
  flagNotFound,
  isFailure,
  type OfrepFlagResult,
} from './ofrep-evaluation.js';

/** What a route writes: an HTTP status and a JSON body (OFREP's shapes, success or failure). */
export interface OfrepAnswer<T> {
  readonly status: 200 | 400 | 404;
  readonly body: T;
}

export interface OfrepBulkBody {
  readonly flags: readonly OfrepFlagResult[];
}

/** Longest key echoed back in a FLAG_NOT_FOUND answer (flag keys are at most 100 characters). */
const MAX_ECHOED_KEY = 100;

/**
 * OpenFeature's Remote Evaluation Protocol over the flags feature: the app's flags from the flag
 * store (no database read per request, as GET /api/v1/flags), evaluated by the flags kernel.
 */
@Injectable()
export class OpenFeatureService {
  constructor(private readonly store: FlagStore) {}

  /** POST /ofrep/v1/evaluate/flags/{key}: one flag; 404 FLAG_NOT_FOUND for a key the app has no flag for. */
  async evaluateOne(
    appId: AppId,
    caller: OfrepCaller,
    key: string,
    body: unknown,
  ): Promise<OfrepAnswer<OfrepFlagResult | (OfrepRequestError & { key: string })>> {
    const echoed = key.slice(0, MAX_ECHOED_KEY);
    const parsed = parseOfrepRequest(body, caller);
    if (isRequestError(parsed)) return { status: 400, body: { key: echoed, ...parsed } };
    const set = await this.store.get(appId);
    const flag = FLAG_KEY_PATTERN.test(key) ? findFlag(set, key) : null;
    if (!flag) return { status: 404, body: flagNotFound(echoed) };
    const result = evaluateOfrep(set, flag, parsed);
    return { status: isFailure(result) ? 400 : 200, body: result };
  }

  /** POST /ofrep/v1/evaluate/flags: every flag of the app, each a success or a failure. */
  async evaluateAll(
    appId: AppId,
    caller: OfrepCaller,
    body: unknown,
  ): Promise<OfrepAnswer<OfrepBulkBody | OfrepRequestError>> {
    const parsed = parseOfrepRequest(body, caller);
    if (isRequestError(parsed)) return { status: 400, body: parsed };
    return { status: 200, body: { flags: evaluateOfrepAll(await this.store.get(appId), parsed) } };
  }
}
