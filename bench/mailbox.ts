// `./env` first: the benchmark's own database and queue prefix, before src/ reads its configuration.
import './env';
import { ensureDovecotInstalled, startDovecot } from '../test/helpers/dovecot';
import { prepareDatabase } from '../src/cli/setup';
import { MAILBOX_PASSWORD, encryptSecret } from '../src/crypto/secrets';
import { Brand, Department, DepartmentBrand, DepartmentEmail, IncomingMail, OutboxEntry } from '../src/db/models';
import { countQueries, sequelize } from '../src/db/sequelize';
import { select } from '../src/db/select';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { pollMailbox } from '../src/mailbox/poll';
import { QUEUES } from '../src/queue/names';
import { closeQueues, queue } from '../src/queue/producer';
import { createWorker } from '../src/queue/runWorker';
import { mailSpec, wire } from '../src/wiring';
import { startSmtp } from '../test/helpers/smtp';
import { num, table } from './table';
import { removeTicketsForGood } from './tickets';

/**
 * Mail import throughput: a private dovecot (the tests' own, test/helpers/dovecot.ts) with a
 * mailbox of BENCH_MAILS (1,000) new mails from different senders, then one poll of the mailbox
 * worker over plain IMAP, timed: every mail parsed, checked (loops, spam, duplicates, threading)
 * and imported as a new ticket with its user, its ledger line and the cursor, a batch of
 * MAILBOX_BATCH_SIZE mails per transaction. A second poll of the same mailbox, with nothing new,
 * shows the cost of an idle poll. Then the mail worker sends the acknowledgements to a real SMTP
 * server (smtp-server, in this process): the run fails unless every sender got exactly one.
 */
export async function mailboxThroughput(mails = Number(process.env.BENCH_MAILS ?? 1000)): Promise<string> {
  wire();
  ensureDovecotInstalled();
  const address = `bench-${Date.now()}@mailbox.bench`;
  const dovecot = await startDovecot([{ user: address, password: 'bench' }]);
  try {
    const appendStarted = Date.now();
    // One IMAP connection for all of them (setup, not measured).
    await dovecot.appendAll(address, Array.from({ length: mails }, (_, i) => [
      `From: Sender ${i} <sender${i}.${Date.now()}@customers.bench>`, `To: ${address}`, `Subject: Order ${i} has not arrived`,
      `Message-ID: <bench.${i}.${Date.now()}@customers.bench>`, `Date: ${new Date().toUTCString()}`, 'Content-Type: text/plain; charset=utf-8', '',
      `Hello,\r\n\r\nmy order ${i} has not arrived yet. Could you look into it?\r\n\r\nThanks`, '',
    ].join('\r\n')));
    const appendSeconds = (Date.now() - appendStarted) / 1000;
    const department = (await Department.findOne({ order: [['id', 'ASC']] }))!;
    const link = (await DepartmentBrand.findOne({ where: { department_id: department.id } }))!;
    const mailbox = await DepartmentEmail.create({
      department_id: department.id, brand_id: link.brand_id, address, type: 1, protocol: 'imap', server: '127.0.0.1',
      port: dovecot.ports.imap, encryption: 'none', username: address, password: encryptSecret('bench', MAILBOX_PASSWORD),
    });
    try {
      // Jobs an earlier run left under this queue prefix name outbox ids of another database.
      await queue(QUEUES.mail).obliterate({ force: true });
      const started = process.hrtime.bigint();
      const cpu = process.cpuUsage();
      const { result: summary, queries } = await countQueries(() => profiled(() => pollMailbox(mailbox.id)));
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const { user, system } = process.cpuUsage(cpu);
      if (process.env.BENCH_SQL_LOG) writeFileSync(process.env.BENCH_SQL_LOG, queries.join('\n'));
      const idleStarted = process.hrtime.bigint();
      await pollMailbox(mailbox.id);
      const idleMs = Number(process.hrtime.bigint() - idleStarted) / 1e6;
      const imported = await IncomingMail.count({ where: { department_email_id: mailbox.id, decision: 'new_ticket' } });
      if (imported !== mails) throw new Error(`imported ${imported} of ${mails} mails: ${JSON.stringify(summary)}`);
      const ackSeconds = await sendAcknowledgements(link.brand_id, mails);
      return table(
        ['mailbox (IMAP, one poll)', 'mails', 'seconds', 'mails/s', 'ms per mail', 'statements per mail', 'worker CPU ms per mail', 'idle poll ms', 'APPEND mails/s (setup)', 'acknowledgements sent, s'],
        [['new mails, each a new ticket', num(mails), num(seconds, 2), num(mails / seconds), num((1000 * seconds) / mails, 1), num(queries.length / mails, 1), num((user + system) / 1000 / mails, 1), num(idleMs, 1), num(mails / appendSeconds), num(ackSeconds, 1)]],
        [false, true, true, true, true, true, true, true, true, true],
      );
    } finally {
      await removeImported(mailbox.id);
      await mailbox.destroy();
    }
  } finally {
    await dovecot.stop();
  }
}

/**
 * Deletes what the import wrote to the data set: its tickets for good (through the counters'
 * triggers), their senders and its ledger lines, so the next run lists the tickets as seeded (a
 * full run left 1,000 more each time).
 */
async function removeImported(mailboxId: number): Promise<void> {
  const rows = await select<{ ticket_id: number }>('SELECT ticket_id FROM incoming_mails WHERE department_email_id = ? AND ticket_id IS NOT NULL', [mailboxId]);
  await removeTicketsForGood(rows.map((r) => Number(r.ticket_id)));
  await sequelize().query("DELETE FROM users WHERE email LIKE '%@customers.bench'");
  await sequelize().query('DELETE FROM incoming_mails WHERE department_email_id = ?', { replacements: [mailboxId] });
}

/**
 * Runs the mail worker against a real SMTP server (the brand pointed at it) until every sender of
 * the benchmark's mails has its acknowledgement, and fails unless each got exactly one and every
 * mail job's outbox entry is processed. Not part of the import's time: returns its own seconds.
 */
async function sendAcknowledgements(brandId: number, mails: number): Promise<number> {
  const smtp = await startSmtp();
  const brand = (await Brand.findByPk(brandId))!;
  const { smtp_host: host, smtp_port: port } = brand;
  await brand.update({ smtp_host: '127.0.0.1', smtp_port: smtp.port });
  const worker = await createWorker(mailSpec());
  const started = Date.now();
  try {
    const senders = () => smtp.received.flatMap((m) => m.envelopeTo).filter((to) => to.endsWith('@customers.bench'));
    const acknowledged = () => new Set(senders()).size;
    let last = -1;
    let movedAt = Date.now();
    for (let n = acknowledged(); n < mails; n = acknowledged()) {
      if (n !== last) [last, movedAt] = [n, Date.now()];
      else if (Date.now() - movedAt > 60_000) throw new Error(`acknowledgements stopped at ${n} of ${mails}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (Date.now() - started) / 1000;
    const sent = senders().length;
    // A job marks its entry processed just after its mail is accepted.
    const unprocessedAfter = Date.now() + 30_000;
    let unprocessed = await OutboxEntry.count({ where: { name: 'ticket.mail', processed_at: null } });
    while (unprocessed && Date.now() < unprocessedAfter) {
      await new Promise((r) => setTimeout(r, 100));
      unprocessed = await OutboxEntry.count({ where: { name: 'ticket.mail', processed_at: null } });
    }
    if (sent !== mails || unprocessed) throw new Error(`${sent} acknowledgements for ${mails} senders, ${unprocessed} mail jobs unprocessed`);
    return seconds;
  } finally {
    await worker.close();
    await brand.update({ smtp_host: host, smtp_port: port });
    await smtp.close();
  }
}

/** BENCH_PROFILE=<file>: a V8 CPU profile of the measured poll alone (read it with dist/bench/profile.js). */
async function profiled<T>(work: () => Promise<T>): Promise<T> {
  const file = process.env.BENCH_PROFILE;
  if (!file) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}

if (require.main === module) {
  (async () => {
    await prepareDatabase();
    process.stdout.write(`\n${await mailboxThroughput()}\n`);
  })().then(
    async () => {
      await Promise.allSettled([closeQueues(), sequelize().close()]);
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`Mailbox benchmark failed: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}
