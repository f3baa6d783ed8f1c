// Imported first by the loop tests, before any module reads the configuration.
import './mailboxEnv';

// A low flood limit, so the auto-responder test reaches it.
process.env.MAIL_FLOOD_LIMIT = '3';
// And a low new-ticket limit, so the robot test reaches it.
process.env.MAIL_FLOOD_NEW_TICKETS = '3';
