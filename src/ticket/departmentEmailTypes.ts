/** The kinds of department email: piped to the help desk, or a remote mailbox it polls. */
export const TYPE_PIPED = 0;
export const TYPE_REMOTE = 1;

/** The usual port of a protocol and encryption, for a mailbox stored without one. */
export const defaultPort = (protocol: string, encryption: string): number =>
  protocol === 'pop3' ? (encryption === 'ssl' ? 995 : 110) : (encryption === 'ssl' ? 993 : 143);
