import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DenySetSourcesService } from '../devices/deny-set-sources.service.js';
import { DebugTokensRepository } from './debug-tokens.repository.js';

/** The revoked debug tokens whose device tokens the deny set refuses, read from attestation's own table. */
@Injectable()
export class DebugTokenDenySetSources implements OnModuleInit {
  constructor(
    private readonly debugTokens: DebugTokensRepository,
    private readonly sources: DenySetSourcesService,
  ) {}

  onModuleInit(): void {
    this.sources.provide('revokedDebugTokens', (since) => this.debugTokens.revokedSince(since));
    this.sources.provide('debugTokenRevoked', (appId, tokenId) => this.debugTokens.isRevoked(appId, tokenId));
  }
}
