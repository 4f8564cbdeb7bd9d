import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** How stale another instance's block may be on this one. */
export const BLOCKED_DEVICES_REFRESH_MS = 5_000;

/**
 * The deny set of device tokens: the keys of blocked devices, by app. Device tokens live up to 30
 * days, so blocking a device must reach the tokens it already holds: the SDK routes that take a
 * token ask here on every request (one set lookup). A block made on this instance applies at
 * once; one made on another instance within BLOCKED_DEVICES_REFRESH_MS, when the set is reread
 * (one indexed query, in the background, while the previous set keeps serving). Unblocking
 * removes the entry the same way, so an entry lasts exactly as long as the block.
 */
@Injectable()
export class BlockedDevices {
  private blocked = new Set<string>();
  private loadedAt = 0;
  private loading: Promise<void> | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async isBlocked(appId: string, keyId: string): Promise<boolean> {
    if (this.loadedAt === 0) await this.reload();
    else if (Date.now() - this.loadedAt > BLOCKED_DEVICES_REFRESH_MS) void this.reload();
    return this.blocked.has(entry(appId, keyId));
  }

  /** What a committed block or unblock on this instance changed. */
  note(appId: string, keyId: string, blocked: boolean): void {
    if (blocked) this.blocked.add(entry(appId, keyId));
    else this.blocked.delete(entry(appId, keyId));
  }

  /** Rereads the set; a failure keeps the previous one (and is retried after the interval). */
  reload(): Promise<void> {
    this.loading ??= this.dataSource
      .query(`SELECT app_id, key_id FROM devices WHERE is_blocked`)
      .then((rows: { app_id: string; key_id: string }[]) => {
        this.blocked = new Set(rows.map((row) => entry(row.app_id, row.key_id)));
      })
      .catch(() => undefined)
      .finally(() => {
        this.loadedAt = Date.now();
        this.loading = null;
      });
    return this.loading;
  }
}

function entry(appId: string, keyId: string): string {
  return `${appId}\u0000${keyId}`;
}
