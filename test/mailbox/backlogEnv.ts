// Imported first by the backlog test, before any module reads the configuration.
import './mailboxEnv';

// Small batches: a backlog of a few dozen mails crosses several batches (each imported in one
// transaction, its side effects published after its COMMIT) without sending hundreds of mails.
process.env.MAILBOX_BATCH_SIZE = '10';
