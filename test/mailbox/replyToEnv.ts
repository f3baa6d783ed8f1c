// Imported first by the Reply-To tests, before any module reads the configuration.
import './mailboxEnv';

process.env.MAIL_PRIORITISE_REPLY_TO = '1';
