import { Injectable } from '@nestjs/common';
import { DenySetSource, type DenySetSources } from '../devices/deny-set-sources.service.js';
import { AppsRepository } from './apps.repository.js';

/** The apps whose device tokens the deny set refuses, read from apps' own table. */
@Injectable()
@DenySetSource(['inactiveApps'])
export class AppsDenySetSources implements Pick<DenySetSources, 'inactiveApps'> {
  constructor(private readonly apps: AppsRepository) {}

  /** Apps deactivated, or of a deactivated organization. */
  inactiveApps(): Promise<string[]> {
    return this.apps.inactiveIds();
  }
}
