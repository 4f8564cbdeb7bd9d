import type { AppsRepository } from '../../src/apps/apps.repository.js';
import { notFound } from '../../src/common/errors/app-exception.js';
import { trustAppId, type AppId } from '../../src/common/access/tenant-id.js';

/** The apps table as the features hanging something off an app read it: which app is whose. */
export class KnownApps implements Pick<AppsRepository, 'find' | 'assertExists'> {
  private readonly apps = new Map<string, { organizationId: string; isActive: boolean; bundleId: string }>();

  add(organizationId: string, appId: string, options: { isActive?: boolean; bundleId?: string } = {}): this {
    this.apps.set(appId, {
      organizationId,
      isActive: options.isActive ?? true,
      bundleId: options.bundleId ?? 'com.example.app',
    });
    return this;
  }

  find(organizationId: string, appId: string): Promise<{ id: AppId; isActive: boolean } | null> {
    const app = this.apps.get(appId);
    return Promise.resolve(
      app && app.organizationId === organizationId ? { id: trustAppId(appId), isActive: app.isActive } : null,
    );
  }

  async assertExists(organizationId: string, appId: string): Promise<void> {
    if (!(await this.find(organizationId, appId))) throw notFound('App');
  }

  asAppsRepository(): AppsRepository {
    return this as unknown as AppsRepository;
  }
}
