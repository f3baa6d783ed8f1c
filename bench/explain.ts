import { QueryTypes } from 'sequelize';
import { sequelize } from '../src/db/sequelize';
import { capture } from './capture';
import { table } from './table';

interface Target {
  ticket: { id: number; user_id: number; department_id: number; status_id: number; priority_id: number };
  organisationId: number;
  searchTerm: string;
}

/** A ticket list with each filter of the spec (and two combined), as the bench data can answer them. */
export function ticketFilterPaths(t: Target): Array<[string, string]> {
  const tk = t.ticket;
  const q = (s: string) => `/api/ticket/ticket?limit=50&${s}`;
  return [
    ['department (with sub-departments)', q(`department=${tk.department_id}`)],
    ['brand', q('brand=1')],
    ['channel', q('channel=1,2')],
    ['status', q(`status=${tk.status_id}`)],
    ['priority', q(`priority=${tk.priority_id}`)],
    ['tag', q('tag=1')],
    ['user', q(`user=${tk.user_id}`)],
    ['organisation', q(`organisation=${t.organisationId}`)],
    ['watching', q('watching=1')],
    ['assigned', q('assigned=1')],
    ['assigned=-1 (unassigned)', q('assigned=-1')],
    ['user_email', q('user_email=nobody%40example.com')],
    ['internal', q('internal=1')],
    ['number', q('number=B1')],
    ['created_at_min', q(`created_at_min=${Math.floor(Date.now() / 1000) - 86400}`)],
    ['search (FULLTEXT)', q(`search=${encodeURIComponent(t.searchTerm)}`)],
    ['status + priority', q(`status=${tk.status_id}&priority=${tk.priority_id}`)],
  ];
}

/**
 * EXPLAIN of the statements a ticket list runs against `tickets` for each filter: the index each
 * table access uses (a filter no index serves shows `ALL`, a full scan). Captured from the app
 * itself, so what is explained is exactly what it runs.
 */
export async function explainTicketFilters(get: (path: string) => Promise<{ count?: number }>, t: Target): Promise<string> {
  const rows: string[][] = [];
  const [{ total }] = await sequelize().query<{ total: number }>('SELECT COUNT(*) AS total FROM tickets', { type: QueryTypes.SELECT });
  for (const [title, path] of ticketFilterPaths(t)) {
    const { statements, result } = await capture(() => get(path));
    const matches = Number(result.count ?? 0);
    // A filter that matches most tickets is best served by a scan: that is the optimizer's choice, not a missing index.
    const broad = matches * 2 >= Number(total);
    // The page and the count: the statements that read the tickets table.
    const main = statements.filter((s) => /^SELECT/i.test(s.sql) && /FROM `tickets`/.test(s.sql)).slice(0, 2);
    for (const [n, st] of main.entries()) {
      const plan = await sequelize().query<Record<string, any>>(`EXPLAIN ${st.sql}`, { replacements: st.params, type: QueryTypes.SELECT });
      const access = plan.map((p) => `${p.table}:${p.type}${p.key ? `(${p.key})` : ''}`).join(' ');
      const scans = plan.filter((p) => p.type === 'ALL' && Number(p.rows) > 1000).map((p) => p.table);
      const verdict = !scans.length ? 'indexed' : broad ? `scan (matches ${matches} of ${total})` : `FULL SCAN: ${scans.join(', ')}`;
      rows.push([n === 0 ? title : '', n === 0 ? `count/page, ${matches} matches` : 'page', access, verdict]);
    }
  }
  return table(['ticket list filter', 'statement', 'access per table (type(key))', 'verdict'], rows, [false, false, false, false]);
}
