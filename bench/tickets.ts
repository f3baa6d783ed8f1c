import { Op, QueryTypes } from 'sequelize';
import { IpBan } from '../src/db/models';
import { now } from '../src/db/entity';
import { sequelize } from '../src/db/sequelize';
import { TICKETS, YEARS } from './env';
import { BUSY_CUSTOMER_EMAIL } from './data';
import { searchEngine } from '../src/ticket/tickets/search/engine';
import { createListCountTriggers, dropListCountTriggers, fillAssigned, fillListCounts } from '../migrations/025_ticket_list_assigned';
import { listIndexes } from '../migrations/097_department_updated_index';
import { dropDayCountTriggers } from '../migrations/026_ticket_day_counts';
import { dropDayFilterCountTriggers } from '../migrations/028_ticket_day_filter_counts';
import { createAssigneeCountTriggers, dropAssigneeCountTriggers, fillAssigneeCounts } from '../migrations/029_ticket_assignee_counts';
import { createUserCountTriggers, dropUserCountTriggers, fillUserCounts } from '../migrations/092_ticket_user_counts_by_filter';
import { createOrganisationCountTriggers, dropOrganisationCountTriggers, fillOrganisationCounts } from '../migrations/091_ticket_organisation_counts';
import { createLinkListTriggers, dropLinkListTriggers, fillLinkLists } from '../migrations/094_link_list_organisations';
import { fillDayMarkCounts, fillMarks } from '../migrations/063_ticket_order_marks';
import { createDayMarkFilterCountTriggers, fillMarkFilterCounts } from '../migrations/089_ticket_mark_filter_counts';
import { createDayOrderDeltaFilterCountTriggers, fillDayOrderDeltaFilterCounts } from '../migrations/095_ticket_time_order_filter_deltas';
import { foldDayCounters } from '../src/ticket/tickets/dayCounterFold';
import { deleteTicketsForGood } from '../src/ticket/tickets/deleteForGood';

/**
 * Tickets (BENCH_TICKETS, 5 messages each) and 200 published articles, written by the database
 * itself: `INSERT ... SELECT` over MariaDB's sequence engine (`seq_1_to_N`), in chunks of 100,000
 * tickets, with the FULLTEXT indexes dropped during the load and rebuilt once at the end (keeping
 * them costs far more per row than one rebuild). Values are pure functions of the sequence number,
 * like ./data.ts. Bench tickets are numbered `B<n>`, so "is the data there" is one count. Three
 * tickets of four have one of the first 50 operators assigned (`assigned=-1` lists the fourth).
 */

const CHUNK = 100_000;
export const MESSAGES_PER_TICKET = 5;
const SUBJECTS = ['Cannot log in', 'Invoice question', 'Refund request', 'Password reset', 'Shipping delay', 'Broken link', 'Feature request', 'Account locked', 'Slow dashboard', 'Export fails'];
const WORDS = ['printer', 'invoice', 'password', 'refund', 'delivery', 'browser', 'mobile', 'export', 'report', 'login', 'error', 'timeout', 'upgrade', 'licence', 'backup', 'server'];

const q = (sql: string, replacements: unknown[] | Record<string, unknown> = []) => sequelize().query(sql, { replacements, type: QueryTypes.RAW });
const select = <T extends object>(sql: string, replacements: unknown[] = []) => sequelize().query<T>(sql, { replacements, type: QueryTypes.SELECT });
/**
 * A ticket's value of a column, independent of its other columns and of its id's counter slot (id
 * MOD 8): a hash of its number, salted per column. (Multiples of the number made a ticket's status,
 * department and slot follow each other, so the counters held a few combinations of them; CRC32 is
 * linear, so salted CRCs of one number still fixed each other's low bits.)
 */
const mix = (salt: string) => `CONV(LEFT(MD5(CONCAT('${salt}', s.seq)), 8), 16, 10)`;
const elt = (expr: string, values: Array<string | number>) => `ELT(1 + (${expr}) MOD ${values.length}, ${values.map((v) => sequelize().escape(v)).join(', ')})`;
const ids = async (sql: string) => (await select<{ id: number }>(sql)).map((r) => r.id);

export async function ensureTicketData(log: (line: string) => void): Promise<void> {
  const [{ n }] = await select<{ n: number }>("SELECT COUNT(*) AS n FROM tickets WHERE number LIKE 'B%'");
  if (Number(n) !== TICKETS) {
    if (Number(n) > 0) throw new Error(`bench: the database holds ${n} bench tickets, not ${TICKETS}: use another BENCH_DATABASE_URL (the default names the scale)`);
    await loadTickets(log);
  }
  await ensureBusyCustomer(log);
  await ensureLargeOrganisation();
  await ensureManyPeopleOrganisation();
  await ensureSmallDepartment(log);
  await ensureSavedFilter();
  await ensureTicketFields(log);
  await ensureOptionFilter();
  await ensureTags(log);
  // The past days' counter rows as the scheduler's fold leaves them within the hour (a data set
  // seeded by an earlier version included): nothing to do when they are.
  await foldDayCounters();
  const [{ a }] = await select<{ a: number }>("SELECT COUNT(*) AS a FROM articles WHERE slug LIKE 'bench-%'");
  if (Number(a) === 0) {
    const t = now();
    // Plain text: its readable text (search_text) is the text itself.
    await q(`INSERT INTO articles (title, slug, excerpt, text, search_text, published, published_at, protected, pinned, created_at, updated_at)
      SELECT title, slug, excerpt, text, text, 1, published_at, 0, 0, published_at, published_at FROM (
        SELECT CONCAT(${elt('seq', SUBJECTS)}, ': how to ', seq) AS title, CONCAT('bench-', seq) AS slug, 'What to do.' AS excerpt,
               CONCAT_WS(' ', ${elt('seq', WORDS)}, ${elt('seq * 7', WORDS)}, 'Step by step, with screenshots.', REPEAT('Lorem ipsum dolor sit amet. ', 20)) AS text,
               ? - seq * 3600 AS published_at
        FROM seq_1_to_200) a`, [t]);
  }
}

/** Every how many bench tickets one is the busy customer's. */
const BUSY_EVERY = 16;

/**
 * A customer with a sixteenth of the tickets (62,500 at 1M: an integration's account, or a
 * reseller's), for `list: user, a busy customer`: every sixteenth bench ticket is moved to them
 * once per data set (the counters follow by trigger), but for the shown and the replied ticket,
 * whose customers the other scenarios read and write.
 */
async function ensureBusyCustomer(log: (line: string) => void): Promise<void> {
  const busy = await busyCustomerId();
  const [{ n }] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM tickets WHERE user_id = ?', [busy]);
  if (Number(n) >= Math.floor(TICKETS / BUSY_EVERY) - 2) return;
  log(`  giving one customer every ${BUSY_EVERY}th ticket...`);
  const middle = Math.ceil(TICKETS / 2);
  await q(`UPDATE tickets SET user_id = ? WHERE number LIKE 'B%' AND CAST(SUBSTRING(number, 2) AS UNSIGNED) MOD ${BUSY_EVERY} = 0 AND number NOT IN (?, ?)`,
    [busy, `B${middle}`, `B${middle + 1}`]);
}

/**
 * The busy customer joins an organisation of their brand (the 21st), once per data set: `list:
 * organisation, a large one` is an organisation of a sixteenth of the tickets, where the seed's
 * organisations hold a few hundred each.
 */
async function ensureLargeOrganisation(): Promise<void> {
  await q(`UPDATE users u SET organisation_id = (SELECT o.id FROM organisations o WHERE o.brand_id = u.brand_id ORDER BY o.id LIMIT 1 OFFSET 20)
    WHERE u.id = ? AND u.organisation_id IS NULL`, [await busyCustomerId()]);
}

/** How many customers in no organisation join the organisation of many people. */
const MANY_PEOPLE = 1_000;

/** The organisation of many people: the 31st of the brand's. */
const manyPeopleOrganisationId = async (): Promise<number> =>
  Number((await select<{ id: number }>('SELECT id FROM organisations ORDER BY id LIMIT 1 OFFSET 30'))[0].id);

/**
 * A thousand customers in no organisation (the busy customer aside) join one, once per data set:
 * `list: organisation of 1,000 people` is an organisation of more people than a merge of their
 * ranges takes (64), with about a twentieth of the tickets (migration 086 makes its page a range
 * of its own). Their tickets follow by trigger.
 */
async function ensureManyPeopleOrganisation(): Promise<void> {
  const org = await manyPeopleOrganisationId();
  const [{ n }] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM users WHERE organisation_id = ?', [org]);
  if (Number(n) >= MANY_PEOPLE) return;
  await q(`UPDATE users SET organisation_id = ?, organisation_access_level = 1
    WHERE type = 'user' AND organisation_id IS NULL AND id <> ? ORDER BY id LIMIT ${MANY_PEOPLE}`, [org, await busyCustomerId()]);
}

const largeOrganisationId = async (): Promise<number> =>
  Number((await select<{ organisation_id: number }>('SELECT organisation_id FROM users WHERE id = ?', [await busyCustomerId()]))[0].organisation_id);

/** Every how many bench tickets one is the small department's. */
const SMALL_EVERY = 1_000;
export const SMALL_DEPARTMENT = 'Bench: a small department';

/**
 * A department of a thousandth of the tickets (1,000 at 1M: billing beside general enquiries),
 * for `list: department, a small one`: the seed's one department holds every ticket, where a
 * filter's own index and the walk of the order's cost the same; here they differ a thousandfold.
 * Made and given every thousandth bench ticket once per data set (the counters follow by trigger).
 */
async function ensureSmallDepartment(log: (line: string) => void): Promise<void> {
  if (!(await smallDepartmentId())) {
    const t = now();
    await q('INSERT INTO departments (name, description, `order`, public, created_at, updated_at) VALUES (?, ?, 2, 1, ?, ?)', [SMALL_DEPARTMENT, 'A thousandth of the tickets.', t, t]);
  }
  const small = (await smallDepartmentId())!;
  const [{ n }] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM tickets WHERE department_id = ?', [small]);
  if (Number(n) >= Math.floor(TICKETS / SMALL_EVERY)) return;
  log(`  giving a small department every ${SMALL_EVERY}th ticket...`);
  await q(`UPDATE tickets SET department_id = ? WHERE number LIKE 'B%' AND CAST(SUBSTRING(number, 2) AS UNSIGNED) MOD ${SMALL_EVERY} = ${SMALL_EVERY - 1}`, [small]);
}

/** The ticket custom fields of `list: customfield`: an options field and a text field. */
const PRODUCT_FIELD = 'Bench: product';
const REFERENCE_FIELD = 'Bench: order reference';
/**
 * The product's options and the share of the tickets holding each: half less a thousandth, three
 * tenths, a fifth, a thousandth (bench ticket B<n> by its n).
 */
const PRODUCTS: Array<[string, string]> = [
  ['Widget', 'n MOD 1000 <> 500 AND n MOD 10 < 5'], ['Gadget', 'n MOD 1000 <> 500 AND n MOD 10 BETWEEN 5 AND 7'],
  ['Gizmo', 'n MOD 1000 <> 500 AND n MOD 10 >= 8'], ['Sprocket', 'n MOD 1000 = 500'],
];
/** The order reference of bench ticket B<n>: `ORD-<n>`, so `ORD-<n>` contained is one ticket (and the few whose n begins with it). */
export const orderReference = (n: number) => `ORD-${n}`;

/**
 * Every bench ticket's product (an options field, by PRODUCTS' shares: an option of half the
 * tickets and one of a thousandth) and order reference (a text field), for `list: customfield`:
 * migration 071's option index and migration 070's grams at the data set's scale. Written once
 * per data set, a chunk of tickets at a time, the triggers keeping both indexes.
 */
async function ensureTicketFields(log: (line: string) => void): Promise<void> {
  const t = now();
  for (const [name, type] of [[PRODUCT_FIELD, 5], [REFERENCE_FIELD, 8]] as const) {
    if (await customFieldId(name)) continue;
    await q("INSERT INTO custom_fields (kind, name, type, `order`, required, public, encrypted, locked, created_at, updated_at) VALUES ('ticket', ?, ?, 50, 0, 1, 0, 0, ?, ?)", [name, type, t, t]);
  }
  const product = (await customFieldId(PRODUCT_FIELD))!;
  const reference = (await customFieldId(REFERENCE_FIELD))!;
  for (const [i, [option]] of PRODUCTS.entries()) {
    await q('INSERT INTO custom_field_options (field_id, value, `order`, created_at, updated_at) SELECT ?, ?, ?, ?, ? FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM custom_field_options WHERE field_id = ? AND value = ?)',
      [product, option, i, t, t, product, option]);
  }
  const [{ n }] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM custom_field_values WHERE field_id = ?', [reference]);
  if (Number(n) >= TICKETS) return;
  log('  giving every ticket a product and an order reference...');
  const options = await productOptionIds();
  const [{ first, last }] = await select<{ first: number; last: number }>("SELECT MIN(id) AS first, MAX(id) AS last FROM tickets WHERE number LIKE 'B%'");
  const option = `CASE ${PRODUCTS.map(([, share], i) => `WHEN ${share} THEN ${sequelize().escape(String(options[i]))}`).join(' ')} END`;
  for (let from = Number(first); from <= Number(last); from += CHUNK) {
    await q(`INSERT IGNORE INTO custom_field_values (field_id, owner_id, value, created_at, updated_at)
      SELECT ?, id, ${option}, ?, ? FROM (SELECT id, CAST(SUBSTRING(number, 2) AS UNSIGNED) AS n FROM tickets WHERE number LIKE 'B%' AND id BETWEEN ? AND ?) b
      UNION ALL SELECT ?, id, CONCAT('ORD-', n), ?, ? FROM (SELECT id, CAST(SUBSTRING(number, 2) AS UNSIGNED) AS n FROM tickets WHERE number LIKE 'B%' AND id BETWEEN ? AND ?) b`,
    [product, t, t, from, from + CHUNK - 1, reference, t, t, from, from + CHUNK - 1]);
  }
  // Statistics of the loaded values now, not when InnoDB's background recount gets to them.
  await select('ANALYZE TABLE custom_field_values');
}

/**
 * The tags of `list: tag` and the bench ticket B<n> holding each (by n): one on a tenth of the
 * tickets (a team's label), one on a thousandth. The seed's tags are on none.
 */
const TAGS: Array<[string, string]> = [['bench-billing', 'n MOD 10 = 3'], ['bench-vip', 'n MOD 1000 = 7']];

/** The bench tags' ids, in TAGS' order. */
async function tagIds(): Promise<number[]> {
  const rows = await select<{ id: number; name: string }>('SELECT id, name FROM ticket_tags WHERE name IN (?)', [TAGS.map(([name]) => name)]);
  return TAGS.map(([name]) => rows.find((r) => r.name === name)?.id ?? 0);
}

/** The bench tags and their links, once per data set, a chunk of tickets at a time, the triggers keeping the tags' counters and lists (migrations 081, 082). */
async function ensureTags(log: (line: string) => void): Promise<void> {
  const t = now();
  for (const [name] of TAGS) {
    await q('INSERT INTO ticket_tags (name, colour, created_at, updated_at) SELECT ?, ?, ?, ? FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM ticket_tags WHERE name = ?)', [name, '#1e88e5', t, t, name]);
  }
  const tags = await tagIds();
  const [{ n }] = await select<{ n: number }>('SELECT COUNT(*) AS n FROM ticket_tag_links WHERE tag_id = ?', [tags[0]]);
  if (Number(n) >= Math.floor(TICKETS / 10)) return;
  log('  tagging a tenth and a thousandth of the tickets...');
  const [{ first, last }] = await select<{ first: number; last: number }>("SELECT MIN(id) AS first, MAX(id) AS last FROM tickets WHERE number LIKE 'B%'");
  for (let from = Number(first); from <= Number(last); from += CHUNK) {
    for (const [i, [, share]] of TAGS.entries()) {
      await q(`INSERT IGNORE INTO ticket_tag_links (ticket_id, tag_id)
        SELECT id, ? FROM (SELECT id, CAST(SUBSTRING(number, 2) AS UNSIGNED) AS n FROM tickets WHERE number LIKE 'B%' AND id BETWEEN ? AND ?) b WHERE ${share}`,
      [tags[i], from, from + CHUNK - 1]);
    }
  }
}

const OPTION_FILTER = 'Bench: a product';

/** A saved filter shared with every operator group, its one condition the product of half the tickets (the list's `customfield` of that option). */
async function ensureOptionFilter(): Promise<void> {
  if (await optionFilterId()) return;
  const t = now();
  await q('INSERT INTO ticket_filters (name, user_id, all_groups, condition_group_type, created_at, updated_at) VALUES (?, NULL, 1, 0, ?, ?)', [OPTION_FILTER, t, t]);
  await q("INSERT INTO ticket_filter_conditions (filter_id, group_no, group_type, position, item, operator, value, field_id) VALUES (?, 0, 0, 0, 'customfield', 'equals', ?, ?)",
    [await optionFilterId(), String((await productOptionIds())[0]), await customFieldId(PRODUCT_FIELD)]);
}

const optionFilterId = () => idByName('ticket_filters', OPTION_FILTER);

const customFieldId = async (name: string) => (await select<{ id: number }>("SELECT id FROM custom_fields WHERE kind = 'ticket' AND name = ?", [name]))[0]?.id;
/** The product's option ids, in PRODUCTS' order. */
async function productOptionIds(): Promise<number[]> {
  const product = await customFieldId(PRODUCT_FIELD);
  const rows = await select<{ id: number; value: string }>('SELECT id, value FROM custom_field_options WHERE field_id = ?', [product]);
  return PRODUCTS.map(([option]) => rows.find((r) => r.value === option)!.id);
}

const SAVED_FILTER = 'Bench: a status';
/** An operator of the seed (not one of the 50 assigned ones) who works in the small department only. */
const DEPARTMENT_OPERATOR_EMAIL = 'operator.199@helpdesk.example';
/** Another, who works in the shown ticket's department only: the one of every ticket but the small department's. */
const LARGE_DEPARTMENT_OPERATOR_EMAIL = 'operator.198@helpdesk.example';

/**
 * A saved filter shared with every operator group (its one condition: the shown ticket's status),
 * and two operators to run it as (`filter_operator`): the small department's, who sees a
 * thousandth of the tickets, and the large one's, who sees the rest but not every ticket.
 */
async function ensureSavedFilter(): Promise<void> {
  const [status] = await select<{ status_id: number }>('SELECT status_id FROM tickets WHERE number = ?', [`B${Math.ceil(TICKETS / 2)}`]);
  if (!(await savedFilterId())) {
    const t = now();
    await q('INSERT INTO ticket_filters (name, user_id, all_groups, condition_group_type, created_at, updated_at) VALUES (?, NULL, 1, 0, ?, ?)', [SAVED_FILTER, t, t]);
    await q("INSERT INTO ticket_filter_conditions (filter_id, group_no, group_type, position, item, operator, value) VALUES (?, 0, 0, 0, 'status', 'equals', ?)",
      [await savedFilterId(), String(status.status_id)]);
  }
  await q('INSERT IGNORE INTO operator_departments (user_id, department_id) VALUES (?, ?)', [await departmentOperatorId(), await smallDepartmentId()]);
  const [shown] = await select<{ department_id: number }>('SELECT department_id FROM tickets WHERE number = ?', [`B${Math.ceil(TICKETS / 2)}`]);
  await q('INSERT IGNORE INTO operator_departments (user_id, department_id) VALUES (?, ?)', [await largeDepartmentOperatorId(), shown.department_id]);
}

/** The id of the record of `table` named `name` (a table name written here). */
async function idByName(table: 'departments' | 'ticket_filters', name: string): Promise<number | undefined> {
  return (await select<{ id: number }>(`SELECT id FROM ${table} WHERE name = ?`, [name]))[0]?.id;
}

const savedFilterId = () => idByName('ticket_filters', SAVED_FILTER);
const smallDepartmentId = () => idByName('departments', SMALL_DEPARTMENT);

/** A person of the seed by address: `what` names them in the error if the seed lacks them. */
async function personId(type: 'user' | 'operator', email: string, what: string): Promise<number> {
  const [person] = await select<{ id: number }>('SELECT id FROM users WHERE type = ? AND email = ?', [type, email]);
  if (!person) throw new Error(`bench: ${what} is missing from the seed`);
  return person.id;
}

const departmentOperatorId = () => personId('operator', DEPARTMENT_OPERATOR_EMAIL, "the small department's operator");
const largeDepartmentOperatorId = () => personId('operator', LARGE_DEPARTMENT_OPERATOR_EMAIL, "the large department's operator");
const busyCustomerId = () => personId('user', BUSY_CUSTOMER_EMAIL, 'the busy customer');

async function loadTickets(log: (line: string) => void) {
  const t = now();
  const started = Date.now();
  log(`Loading ${TICKETS.toLocaleString('en-GB')} tickets and ${(TICKETS * MESSAGES_PER_TICKET).toLocaleString('en-GB')} messages...`);
  const departments = await ids('SELECT id FROM departments ORDER BY id');
  const brand = (await ids('SELECT id FROM brands ORDER BY id LIMIT 1'))[0];
  const channels = await ids('SELECT id FROM channels ORDER BY id');
  const statuses = await ids('SELECT id FROM ticket_statuses ORDER BY id');
  const priorities = await ids('SELECT id FROM ticket_priorities ORDER BY id');
  const operators = await ids("SELECT id FROM users WHERE type = 'operator' ORDER BY id LIMIT 50");
  if (!departments.length || !channels.length || !statuses.length || !priorities.length || !operators.length) throw new Error('bench: the seed lacks departments, channels, statuses, priorities or operators');
  // Users by row number, so a ticket's user is a join on (seq mod count) + 1.
  await q('DROP TABLE IF EXISTS bench_users');
  await q('CREATE TABLE bench_users (n INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, id INT UNSIGNED NOT NULL)');
  await q("INSERT INTO bench_users (id) SELECT id FROM users WHERE type = 'user' ORDER BY id");
  const [{ users }] = await select<{ users: number }>('SELECT COUNT(*) AS users FROM bench_users');

  // The list's sort indexes and counting triggers (those of `tickets.assigned` too) are built once
  // after the load, the flags and counts filled then (the filter indexes stay: the foreign keys need them).
  const sortIndexes = Object.entries(listIndexes()).filter(([n]) => n.startsWith('tickets_list_'));
  await q(`ALTER TABLE tickets ${sortIndexes.map(([n]) => `DROP INDEX ${n}`).join(', ')}`);
  await dropListCountTriggers(sequelize().getQueryInterface());
  await dropDayCountTriggers(sequelize().getQueryInterface());
  await dropDayFilterCountTriggers(sequelize().getQueryInterface());
  await dropAssigneeCountTriggers(sequelize().getQueryInterface());
  await dropUserCountTriggers(sequelize().getQueryInterface());
  await dropOrganisationCountTriggers(sequelize().getQueryInterface());
  await dropLinkListTriggers(sequelize().getQueryInterface());
  await q('ALTER TABLE tickets DROP INDEX tickets_subject_search');
  await q('ALTER TABLE ticket_messages DROP INDEX ticket_messages_text_search');
  // The Mroonga index (SEARCH_ENGINE=mroonga) goes too: its triggers would rewrite a ticket's
  // document once per row loaded (each message appends to it). The engine's prepare makes it
  // again after the load and fills it, 20,000 tickets per statement.
  await dropMroongaIndex();
  try {
    for (let from = 1; from <= TICKETS; from += CHUNK) {
      const to = Math.min(TICKETS, from + CHUNK - 1);
      // Created over the last BENCH_YEARS (two) years in ticket order, as a help desk makes them
      // (ids follow created_at: docs/performance.md, "A deep start"); updated some time since.
      const span = YEARS * 365 * 24 * 3600;
      const created = `(:now - ${span} + (s.seq - 1) * ${span} DIV ${TICKETS})`;
      const updated = `(${created} + (s.seq * 7919) MOD (${span} - (s.seq - 1) * ${span} DIV ${TICKETS} + 1))`;
      await q(`INSERT INTO tickets (number, department_id, brand_id, channel_id, user_id, status_id, priority_id, subject,
                 last_reply_time, last_reply_by, locked, merged, internal, token, created_at, updated_at)
        SELECT CONCAT('B', s.seq), ${elt(mix('d'), departments)}, ${brand}, ${elt(mix('c'), channels)}, u.id,
               ${elt(mix('s'), statuses)}, ${elt(mix('p'), priorities)},
               CONCAT(${elt('s.seq', SUBJECTS)}, ' ', ${elt('s.seq * 13', WORDS)}, ' ', s.seq),
               ${updated}, 1, 0, 0, 0, SHA1(s.seq), ${created}, ${updated}
        FROM seq_${from}_to_${to} s JOIN bench_users u ON u.n = 1 + s.seq MOD ${users}
        ORDER BY s.seq`, { now: t });
      // Five messages each: the user's question, then operator and user in turn.
      await q(`INSERT INTO ticket_messages (ticket_id, channel_id, user_id, \`by\`, type, text, is_draft, pinned, created_at, updated_at)
        SELECT tk.id, tk.channel_id, IF(m.seq MOD 2 = 0, tk.user_id, ${elt('tk.id', operators)}), IF(m.seq MOD 2 = 0, 1, 0), 0,
               CONCAT_WS(' ', 'Hello,', ${elt('tk.id + m.seq', WORDS)}, ${elt('tk.id * 3 + m.seq', WORDS)}, ${elt('tk.id * 7 + m.seq', WORDS)},
                         'does not work since yesterday. Could you have a look? Regards,', m.seq),
               0, 0, tk.created_at + m.seq * 1200, tk.created_at + m.seq * 1200
        FROM tickets tk JOIN seq_0_to_${MESSAGES_PER_TICKET - 1} m
        WHERE tk.number LIKE 'B%' AND tk.id BETWEEN (SELECT MIN(id) FROM tickets WHERE number = CONCAT('B', ?)) AND (SELECT MAX(id) FROM tickets WHERE number = CONCAT('B', ?))
        ORDER BY tk.id, m.seq`, [from, to]);
      // (Triggers dropped: with them, this statement, which reads tickets, could not have a trigger
      // of ticket_assignees update them, MariaDB's error 1442. fillAssigned sets the flags after.)
      await q(`INSERT INTO ticket_assignees (ticket_id, user_id)
        SELECT tk.id, ${elt('tk.id * 7', operators)} FROM tickets tk
        WHERE tk.number LIKE 'B%' AND tk.id MOD 4 <> 0
          AND tk.id BETWEEN (SELECT MIN(id) FROM tickets WHERE number = CONCAT('B', ?)) AND (SELECT MAX(id) FROM tickets WHERE number = CONCAT('B', ?))`, [from, to]);
      log(`  ${to.toLocaleString('en-GB')} tickets (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
  } finally {
    log('  rebuilding the FULLTEXT indexes...');
    await q('ALTER TABLE tickets ADD FULLTEXT INDEX tickets_subject_search (subject)');
    await q('ALTER TABLE ticket_messages ADD FULLTEXT INDEX ticket_messages_text_search (text)');
    // Rows inserted while a table had no FULLTEXT index are missing from one added afterwards
    // (their hidden FTS_DOC_ID is never assigned): a rebuild of the table indexes them.
    await q('ALTER TABLE tickets ENGINE=InnoDB');
    log('  building the list indexes and counts...');
    await fillAssigned(sequelize().getQueryInterface());
    await q(`ALTER TABLE tickets ${sortIndexes.map(([n, c]) => `ADD INDEX ${n} (${c.join(', ')})`).join(', ')}`);
    await createListCountTriggers(sequelize().getQueryInterface());
    await fillListCounts(sequelize().getQueryInterface());
    // The string orders' marks before their counters (migration 063).
    await fillMarks(sequelize().getQueryInterface());
    await createDayMarkFilterCountTriggers(sequelize().getQueryInterface());
    await fillDayMarkCounts(sequelize().getQueryInterface());
    await createDayOrderDeltaFilterCountTriggers(sequelize().getQueryInterface());
    await fillDayOrderDeltaFilterCounts(sequelize().getQueryInterface());
    await fillMarkFilterCounts(sequelize().getQueryInterface());
    // The past days' rows as the scheduler's fold leaves them within the hour (migration 051).
    await foldDayCounters();
    await createAssigneeCountTriggers(sequelize().getQueryInterface());
    await fillAssigneeCounts(sequelize().getQueryInterface());
    await createUserCountTriggers(sequelize().getQueryInterface());
    await fillUserCounts(sequelize().getQueryInterface());
    await createOrganisationCountTriggers(sequelize().getQueryInterface());
    await fillOrganisationCounts(sequelize().getQueryInterface());
    await fillLinkLists(sequelize().getQueryInterface());
    await createLinkListTriggers(sequelize().getQueryInterface());
    await q('ALTER TABLE ticket_messages ENGINE=InnoDB');
    await q('DROP TABLE IF EXISTS bench_users');
  }
  log('  building the search index...');
  await searchEngine().prepare();
  await select('ANALYZE TABLE tickets, ticket_messages');
  log(`Loaded in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}

/** The names of the Mroonga index's triggers in the data set (none without the index). */
export const mroongaTriggers = async (): Promise<string[]> => (await select<{ name: string }>(
  "SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'ticket\\_search\\_%'",
)).map((t) => t.name);

/** Removes the Mroonga index and its triggers if the database has them (docs/performance.md, Search). */
async function dropMroongaIndex() {
  for (const name of await mroongaTriggers()) await q(`DROP TRIGGER \`${name}\``);
  await q('DROP TABLE IF EXISTS ticket_search, ticket_search_hidden, ticket_search_pieces');
}

/** The text of the benchmark's replies (`__SEQ__` filled per request): how they are found and removed. */
export const REPLY_TEXT = 'Any news __SEQ__?';

/** Removes the IP bans the benchmark's creates wrote (their addresses are in 100.64.0.0/10: loadgen.ts ipOf). */
export const removeBenchBans = () => IpBan.destroy({ where: { ip: { [Op.like]: '100.%' } } });

/**
 * Removes the people the benchmark's `create user` scenario wrote (`bench-<n>@load.example`, ours
 * and the floor's), with what their delete cascades to (addresses, tokens: they have no tickets),
 * so the user list counts the same people on every run. One statement: its trigger keeps the
 * people's counters (migration 056).
 */
export const removeBenchUsers = () => q("DELETE FROM users WHERE email LIKE 'bench-%@load.example'");

/**
 * Deletes the tickets in `ids` for good, a thousand per transaction, through the counters'
 * triggers (removeBenchTickets, and the mailbox import's: bench/mailbox.ts).
 */
export async function removeTicketsForGood(ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 1000) await sequelize().transaction((transaction) => deleteTicketsForGood(ids.slice(i, i + 1000), transaction));
}

/**
 * Deletes for good the tickets the benchmark's creates wrote (subject `Load test <n>`, for the
 * writing customer: ticketTargets' writerId), a thousand at a time, through the counters'
 * triggers, so the next run lists the same data set (two runs' creates had moved a priority's
 * count from 249,585 to 267,886 at 1M).
 */
export async function removeBenchTickets(writerId: number): Promise<void> {
  for (;;) {
    const ids = (await select<{ id: number }>("SELECT id FROM tickets WHERE user_id = ? AND subject LIKE 'Load test %' ORDER BY id LIMIT 1000", [writerId])).map((r) => r.id);
    if (!ids.length) return;
    await removeTicketsForGood(ids);
  }
}

/**
 * Removes the replies the benchmark wrote to these tickets (a run of an older version replied to
 * the ticket that `messages of a ticket` reads); the generated messages all start with `Hello,`.
 */
export async function removeBenchReplies(ticketIds: number[]): Promise<void> {
  await q('DELETE FROM ticket_messages WHERE ticket_id IN (?) AND text LIKE ?', [ticketIds, `${REPLY_TEXT.split('__SEQ__')[0]}%`]);
}

/**
 * Targets of the ticket scenarios: a ticket in the middle (shown, and its messages listed), the
 * one after it (replied to, so that the read scenarios read the same data on every run), and a
 * user and operator for writes.
 */
export async function ticketTargets() {
  type Target = { id: number; user_id: number; department_id: number; status_id: number; priority_id: number; subject: string };
  const target = async (n: number) => (await select<Target>(
    'SELECT id, user_id, department_id, status_id, priority_id, subject FROM tickets WHERE number = ?', [`B${n}`],
  ))[0];
  const [ticket, replied] = [await target(Math.ceil(TICKETS / 2)), await target(Math.ceil(TICKETS / 2) + 1)];
  const [article] = await select<{ id: number }>("SELECT id FROM articles WHERE slug = 'bench-100'");
  const [org] = await select<{ id: number }>('SELECT id FROM organisations ORDER BY id LIMIT 1 OFFSET 10');
  const [ban] = await select<{ id: number }>('SELECT id FROM ip_bans ORDER BY id LIMIT 1 OFFSET 10');
  // The operator of the first assigned ticket: one of 50 operators, each with a fiftieth of the assigned tickets.
  const [operator] = await select<{ user_id: number }>('SELECT user_id FROM ticket_assignees ORDER BY ticket_id LIMIT 1');
  if (!ticket || !replied || !article || !org || !ban || !operator) throw new Error("bench: a target record is missing");
  // New tickets are created for the replied ticket's customer, not the shown one's: `list: user`
  // reads the shown ticket's customer, whose list would otherwise grow with every run.
  if (replied.user_id === ticket.user_id) throw new Error('bench: the shown and the replied ticket have the same customer');
  // The common search: each word is in 100,000 of the generated subjects, all three in 12,500.
  // The selective one: the last word of the shown ticket's subject, its sequence number, which
  // no other ticket or message has. (With a common word beside it, InnoDB's FULLTEXT still reads
  // that word's whole list: 0.4 s for `printer` in the messages; README, Benchmark.)
  return {
    ticket, replied, writerId: replied.user_id, busyCustomerId: await busyCustomerId(), smallDepartmentId: (await smallDepartmentId())!,
    savedFilterId: (await savedFilterId())!, optionFilterId: (await optionFilterId())!, productFieldId: (await customFieldId(PRODUCT_FIELD))!, productOptionIds: await productOptionIds(),
    referenceFieldId: (await customFieldId(REFERENCE_FIELD))!, departmentOperatorId: await departmentOperatorId(), largeDepartmentOperatorId: await largeDepartmentOperatorId(),
    tagIds: await tagIds(), articleId: article.id, organisationId: org.id, largeOrganisationId: await largeOrganisationId(),
    manyPeopleOrganisationId: await manyPeopleOrganisationId(), banId: ban.id, operatorId: operator.user_id,
    searchTerm: 'shipping delay report', selectiveSearchTerm: ticket.subject.split(' ').pop()!,
    // In a sixteenth of the subjects and, three words of sixteen each, in about a sixth of the messages.
    commonSearchTerm: 'printer',
  };
}
