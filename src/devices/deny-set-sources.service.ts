import { Injectable } from '@nestjs/common';
import type { DenySetDelta, RevokedDebugToken } from './deny-set-state.js';

export type { DenySetDelta, RevokedDebugToken } from './deny-set-state.js';

/**
 * The parts of the device-token deny set kept in tables of features that import devices, each
 * read by its owner: BlockedDevices cannot call them without a feature cycle.
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
  debugTokenRevoked(appId: string, tokenId: string): Promise<boolean>;
}

/** Every source, so that one left unprovided is named (a new source is a compile error until listed). */
const SOURCES: Record<keyof DenySetSources, true> = {
  inactiveApps: true,
  revokedDebugTokens: true,
  debugTokenRevoked: true,
};

/**
 * Where BlockedDevices reads the parts of the deny set that other features own: apps and
 * attestation provide their reads when their modules start (`provide`, in `onModuleInit`, which
 * Nest runs for every module before the application serves a request), as they register
 * organization removal participants, and the SQL stays with the table's owner. A read of a source
 * nobody provided throws: a deny set missing a part is never believed.
 */
@Injectable()
export class DenySetSourcesService implements DenySetSources {
  private readonly sources: Partial<DenySetSources> = {};

  provide<K extends keyof DenySetSources>(name: K, read: DenySetSources[K]): void {
    this.sources[name] = read;
  }

  /** The sources no feature has provided yet (none once the application has started). */
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

  async debugTokenRevoked(appId: string, tokenId: string): Promise<boolean> {
    return this.source('debugTokenRevoked')(appId, tokenId);
  }

  private source<K extends keyof DenySetSources>(name: K): DenySetSources[K] {
    const read = this.sources[name];
    if (!read) throw new Error(`No feature provides the deny-set source ${name}`);
    return read;
  }
}
