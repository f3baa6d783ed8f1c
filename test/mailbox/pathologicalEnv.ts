// Imported after mailboxEnv by the pathological-mail test, before any module reads the configuration.
process.env.MAILBOX_MAX_MESSAGE_BYTES = '400000';
