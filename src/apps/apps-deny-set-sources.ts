import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DenySetSourcesService } from '../devices/deny-set-sources.service.js';
import { AppsRepository } from './apps.repository.js';

/** The apps whose device tokens the deny set refuses, read from apps' own table. */
@Injectable()
export class AppsDenySetSources implements OnModuleInit {
  constructor(
    private readonly apps: AppsRepository,
    private readonly sources: DenySetSourcesService,
  ) {}

  onModuleInit(): void {
    this.sources.provide('inactiveApps', () => this.inactiveApps());
  }

  /** Apps deactivated, or of a deactivated organization. */
  inactiveApps(): Promise<string[]> {
    return this.apps.inactiveIds();
  }
}
