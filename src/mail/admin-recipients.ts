import type { DataSource } from 'typeorm';

/** E-mail addresses of an organization's active Admins and Owners: who organization notices go to. */
export async function adminRecipients(dataSource: DataSource, organizationId: string): Promise<string[]> {
  const rows: { email: string }[] = await dataSource.query(
    `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.organization_id = $1 AND m.role IN ('admin', 'owner') AND u.status = 'active'
      ORDER BY m.created_at`,
    [organizationId],
  );
  return rows.map((row) => row.email);
}
