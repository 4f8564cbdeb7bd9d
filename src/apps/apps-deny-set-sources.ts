import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DenySetSource, type DenySetSources } from '../devices/deny-set-sources.service.js';
import { organizationJoin } from '../organizations/organizations.service.js';

/** The apps whose device tokens the deny set refuses, read from apps' own table. */
@Injectable()
@DenySetSource(['inactiveApps'])
export class AppsDenySetSources implements Pick<DenySetSources, 'inactiveApps'> {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Apps deactivated, or of a deactivated organization. */
  async inactiveApps(): Promise<string[]> {
    const rows = await this.dataSource.query<{ id: string }[]>(
      `SELECT a.id FROM apps a ${organizationJoin('o', 'a.organization_id')}
        WHERE NOT a.is_active OR NOT o.active`,
    );
    return rows.map((row) => row.id);
  }
}
