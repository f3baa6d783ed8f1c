// Imported first by the mailbox tests, before any module reads the configuration.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Polls every 200 ms, a short backoff after a failure, and a short network timeout.
process.env.MAILBOX_POLL_EVERY_MS = '200';
process.env.MAILBOX_MAX_BACKOFF_SECONDS = '2';
process.env.MAILBOX_TIMEOUT_MS = '5000';
// The test dovecot's self-signed certificate is written here once it has started; the file exists
// (empty) before, as the configuration checks it can be read.
process.env.MAILBOX_TLS_CA_FILE = join(tmpdir(), `helpdesk-test-ca-${process.pid}.pem`);
writeFileSync(process.env.MAILBOX_TLS_CA_FILE, '');
// A low cap, so the loop test reaches it.
process.env.MAIL_NOTIFY_CAP = '3';
process.env.MAIL_REPLY_SUBADDRESS = '1';
