import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { AppId } from '../common/access/tenant-id.js';
import { DiscoveryService } from '@nestjs/core';
import { discovered, providedSources } from '../common/discovery/discovered.js';
import type { DenySetDelta, RevokedDebugToken } from './deny-set-state.js';

export type { DenySetDelta, RevokedDebugToken } from './deny-set-state.js';

/**
 * The parts of the device-token deny set kept in tables of features that import devices, each
 * read by its owner: DenySet cannot call them without a feature cycle.
 */
export interface DenySetSources {
  /** apps: the apps whose device tokens are refused while they stay so (deactivated, or their organization is). */
  inactiveApps(): Promise<string[]>;
  /**
   * attestation: the revoked debug tokens that were exchanged and whose device tokens may still
   * live, changed since `since` (all of them when null), with the cursor of the next read
   * (decision 0065). One never exchanged minted nothing and is never among them.
   */
  revokedDebugTokens(since: string | null): Promise<DenySetDelta<RevokedDebugToken>>;
  /** attestation: whether the debug token `tokenId` of `appId` is revoked, read now in one query. */
  debugTokenRevoked(appId: AppId, tokenId: string): Promise<boolean>;
}

/** Every source, so that one left unprovided is named (a new source is a compile error until listed). */
const SOURCES: Record<keyof DenySetSources, true> = {
  inactiveApps: true,
  revokedDebugTokens: true,
  debugTokenRevoked: true,
};

/**
 * Marks a provider that implements the named reads of `DenySetSources` (methods of the same
 * names): DenySetSourcesService finds it when the devices module starts.
 */
export const DenySetSource = DiscoveryService.createDecorator<(keyof DenySetSources)[]>();

/**
 * Where DenySet reads the parts of the deny set that other features own: apps and
 * attestation mark a provider of theirs `@DenySetSource(…)` with the reads it implements, found
 * when the devices module starts (before the application serves a request), and the SQL stays with
 * the table's owner. A read of a source nobody provides throws: a deny set missing a part is never
 * believed; a source provided twice fails the start.
 */
@Injectable()
export class DenySetSourcesService implements DenySetSources, OnModuleInit {
  private sources: Partial<DenySetSources> = {};

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.sources = providedSources<DenySetSources>(
      'deny-set source',
      discovered<Partial<DenySetSources>, (keyof DenySetSources)[]>(this.discovery, DenySetSource),
    );
  }

  /** The sources no feature provides (none once the application has started). */
  missing(): (keyof DenySetSources)[] {
    return (Object.keys(SOURCES) as (keyof DenySetSources)[]).filter((name) => !this.sources[name]);
  }

  // async, so that a missing source rejects like a failed read rather than throwing at the call.
  async inactiveApps(): Promise<string[]> {
    return this.source('inactiveApps')();
  }

  async revokedDebugTokens(since: string | null): Promise<DenySetDelta<RevokedDebugToken>> {
    return this.source('revokedDebugTokens')(since);
  }

  async debugTokenRevoked(appId: AppId, tokenId: string): Promise<boolean> {
    return this.source('debugTokenRevoked')(appId, tokenId);
  }

  private source<K extends keyof DenySetSources>(name: K): DenySetSources[K] {
    const read = this.sources[name];
    if (!read) throw new Error(`No feature provides the deny-set source ${name}`);
    return read;
  }
}
