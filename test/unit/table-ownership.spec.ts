import { describe, expect, it } from '@jest/globals';

interface Finding {
  path: string;
  line: number;
  table: string;
  owner: string;
  feature: string;
}
interface TableCheck {
  checkTableOwnership(
    this: void,
    input: {
      owners: Record<string, string>;
      notFeatures: string[];
      remaining: Record<string, string[]>;
      sources: [string, string][];
    },
  ): { violations: Finding[]; allowed: Finding[]; stale: { path: string; table: string }[] };
}

// The check is a plain script of `npm run lint`; a path held in a variable keeps tsc out of it.
const script = new URL('../../scripts/table-ownership.mjs', import.meta.url).href;
const load = async (): Promise<TableCheck> => (await import(script)) as TableCheck;

const owners = { organizations: 'organizations', apps: 'apps', webhook_endpoints: 'webhooks' };
const entity = [
  'src/organizations/organization.entity.ts',
  `@Entity('organizations') export class Organization { id!: string; }`,
] as [string, string];

async function check(sources: [string, string][], remaining: Record<string, string[]> = {}) {
  const { checkTableOwnership } = await load();
  return checkTableOwnership({ owners, notFeatures: ['database', 'cli'], remaining, sources: [entity, ...sources] });
}

describe('the table check of npm run lint', () => {
  it('lets a feature query its own tables', async () => {
    const result = await check([['src/apps/apps.service.ts', 'q(`SELECT id FROM apps a WHERE a.id = $1`);']]);
    expect(result.violations).toEqual([]);
  });

  it('finds another feature’s table in raw SQL, joins and template literals included', async () => {
    const result = await check([
      [
        'src/webhooks/webhook-outbox.ts',
        'const tier = "x";\nq(`SELECT e.id FROM webhook_endpoints e\n JOIN organizations o ON o.id = e.organization_id AND ${tier}`);',
      ],
      ['src/apps/apps.service.ts', `q('UPDATE organizations SET name = $2 WHERE id = $1');`],
    ]);
    expect(result.violations.map(({ path, line, table, owner }) => ({ path, line, table, owner }))).toEqual([
      { path: 'src/webhooks/webhook-outbox.ts', line: 2, table: 'organizations', owner: 'organizations' },
      { path: 'src/apps/apps.service.ts', line: 1, table: 'organizations', owner: 'organizations' },
    ]);
  });

  it('finds another feature’s table through TypeORM: query builders and entity classes', async () => {
    const result = await check([
      ['src/apps/a.ts', `qb.from('organizations', 'o');`],
      ['src/apps/b.ts', `manager.findOneBy(Organization, { id });`],
      ['src/apps/c.ts', `class C { constructor(@InjectRepository(Organization) r: unknown) {} }`],
      ['src/apps/d.ts', `TypeOrmModule.forFeature([Organization]);`],
    ]);
    expect(result.violations.map(({ path, table }) => `${path} ${table}`)).toEqual([
      'src/apps/a.ts organizations',
      'src/apps/b.ts organizations',
      'src/apps/c.ts organizations',
      'src/apps/d.ts organizations',
    ]);
  });

  it('ignores words that are not SQL and tables it does not know', async () => {
    const result = await check([
      [
        'src/apps/apps.controller.ts',
        `@Controller('organizations') class A { m = 'unique across all organizations'; }`,
      ],
      ['src/apps/x.ts', 'q(`SELECT 1 FROM unnest($1::text[]) AS t JOIN generate_series(1, 2) g ON true`);'],
    ]);
    expect(result.violations).toEqual([]);
  });

  it('leaves the database folder, the command line and bootstrap files alone', async () => {
    const result = await check([
      ['src/database/x.ts', `q('SELECT 1 FROM apps')`],
      ['src/cli/x.ts', `q('UPDATE organizations SET service_tier = $2')`],
      ['src/main.ts', `q('SELECT 1 FROM apps')`],
    ]);
    expect(result.violations).toEqual([]);
  });

  it('allows a listed remaining query and reports a listed one that is gone', async () => {
    const result = await check([['src/apps/a.ts', `q('SELECT 1 FROM organizations')`]], {
      'src/apps/a.ts': ['organizations'],
      'src/apps/b.ts': ['organizations'],
    });
    expect(result.violations).toEqual([]);
    expect(result.allowed.map(({ path }) => path)).toEqual(['src/apps/a.ts']);
    expect(result.stale).toEqual([{ path: 'src/apps/b.ts', table: 'organizations' }]);
  });
});
