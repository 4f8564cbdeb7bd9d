import { Injectable } from '@nestjs/common';
import type { AppId } from '../common/access/tenant-id.js';
import {
  DenySetSource,
  type DenySetDelta,
  type DenySetSources,
  type RevokedDebugToken,
} from '../devices/deny-set-sources.service.js';
import { DebugTokensRepository } from './debug-tokens.repository.js';

/** The revoked debug tokens whose device tokens the deny set refuses, read from attestation's own table. */
@Injectable()
@DenySetSource(['revokedDebugTokens', 'debugTokenRevoked'])
export class DebugTokenDenySetSources implements Pick<DenySetSources, 'revokedDebugTokens' | 'debugTokenRevoked'> {
  constructor(private readonly debugTokens: DebugTokensRepository) {}

  /** The revoked debug tokens whose device tokens may still live (decision 0065), through the repository. */
  revokedDebugTokens(since: string | null): Promise<DenySetDelta<RevokedDebugToken>> {
    return this.debugTokens.revokedSince(since);
  }

  debugTokenRevoked(appId: AppId, tokenId: string): Promise<boolean> {
    return this.debugTokens.isRevoked(appId, tokenId);
  }
}
