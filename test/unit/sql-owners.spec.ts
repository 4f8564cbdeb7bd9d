import { describe, expect, it } from '@jest/globals';

interface DataAccessCheck {
  checkDataAccess(
    this: void,
    input: { sources: [string, string][]; remaining: Record<string, string[]>; exceptions?: Record<string, string[]> },
  ): { violations: [string, string[]][]; remaining: string[]; stale: string[] };
}

// The check is a plain script of `npm run lint`; a path held in a variable keeps tsc out of it.
const script = new URL('../../scripts/sql-owners.mjs', import.meta.url).href;
const load = async (): Promise<DataAccessCheck> => (await import(script)) as DataAccessCheck;

const rulesOf = async (path: string, text: string, exceptions?: Record<string, string[]>) => {
  const { checkDataAccess } = await load();
  const { violations } = checkDataAccess({ sources: [[path, text]], remaining: {}, exceptions });
  return violations.flatMap(([, found]) => found.map((line) => line.split(' ')[1]));
};

describe('data access only through repositories (decision 0070)', () => {
  it('refuses SQL, data sources, managers and hand-made transactions in a service, and allows them in a repository', async () => {
    const service = [
      `import { InjectDataSource } from '@nestjs/typeorm';`,
      `constructor(@InjectDataSource() private readonly dataSource: DataSource) {}`,
      `const rows = await this.dataSource.query('SELECT 1');`,
      `await this.dataSource.transaction(async (manager: EntityManager) => manager.getRepository(Flag).save(flag));`,
      `const q = repo.createQueryBuilder('f');`,
    ].join('\n');
    expect(new Set(await rulesOf('src/flags/flags.service.ts', service))).toEqual(
      new Set(['data-source', 'sql', 'entity-manager', 'hand-made-transaction']),
    );
    expect(await rulesOf('src/flags/flags.repository.ts', service)).toEqual([]);
  });

  it('refuses pasted SQL fragments everywhere, repositories included', async () => {
    const fragment = 'const join = `JOIN apps a ON a.id = ${sqlReference(column)}`;';
    expect(await rulesOf('src/apps/apps.repository.ts', fragment)).toEqual(['sql-fragment']);
  });

  it('lets only repositories and the listed access layer brand tenant ids', async () => {
    const branding = 'const id = trustOrganizationId(body.organizationId);';
    expect(await rulesOf('src/flags/flags.controller.ts', branding)).toEqual(['tenant-brand']);
    expect(await rulesOf('src/flags/flags.repository.ts', branding)).toEqual([]);
    expect(await rulesOf('src/auth/access.guard.ts', branding)).toEqual([]);
    // The access guard establishes a tenant at one call: a second brand in it is refused.
    expect(await rulesOf('src/auth/access.guard.ts', `${branding}\n${branding}`)).toEqual(['tenant-brand']);
    expect(await rulesOf('src/x/x.ts', `${branding}\n${branding}`, { 'src/x/x.ts': ['tenant-brand:2'] })).toEqual([]);
  });

  it('ignores comments and type-only imports, and honours a listed exception', async () => {
    const text = [
      `// this.dataSource.query(...) used to live here`,
      ` * manager.query in a doc comment`,
      `import type { DataSource } from 'typeorm';`,
    ].join('\n');
    expect(await rulesOf('src/x/x.service.ts', text)).toEqual([]);
    expect(await rulesOf('src/x/x.service.ts', 'await pool.query(sql);', { 'src/x/': ['sql'] })).toEqual([]);
  });

  it('keeps the list of files still to move exact: a listed file that passes is stale', async () => {
    const { checkDataAccess } = await load();
    const result = checkDataAccess({
      sources: [
        ['src/a/a.service.ts', 'await this.dataSource.query(sql);'],
        ['src/b/b.service.ts', 'return this.repository.find(id);'],
      ],
      remaining: { group: ['src/a/a.service.ts', 'src/b/b.service.ts'] },
    });
    expect(result).toEqual({ violations: [], remaining: ['src/a/a.service.ts'], stale: ['src/b/b.service.ts'] });
  });
});
