import { Resolver } from 'node:dns/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { TxtLookup } from './domain-challenge.js';

/** Answers that say the name or its TXT record does not exist (as opposed to no answer at all). */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'NOTFOUND', 'NODATA']);

/**
 * TXT lookups through Node's resolver, on the servers of `DNS_SERVERS` (else the system's). A
 * lookup never throws: it answers records, absent, or failed with the resolver's code.
 */
@Injectable()
export class DnsTxtLookup {
  private readonly resolver: Resolver;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.resolver = new Resolver({ timeout: 3_000, tries: 2 });
    if (config.dnsServers.length) this.resolver.setServers([...config.dnsServers]);
  }

  async lookup(name: string): Promise<TxtLookup> {
    try {
      const records = await this.resolver.resolveTxt(name);
      return { kind: 'records', values: records.map((chunks) => chunks.join('')) };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && ABSENT.has(code)) return { kind: 'absent' };
      return { kind: 'failed', reason: typeof code === 'string' ? code : 'lookup failed' };
    }
  }
}
