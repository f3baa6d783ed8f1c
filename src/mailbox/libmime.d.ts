/** The part of libmime the mailbox uses (the package ships no types; mailparser and imapflow run on it too). */
declare module 'libmime' {
  const libmime: {
    /** Decodes the RFC 2047 encoded-words of a header value (`=?UTF-8?Q?M=C3=BCller?=` → `Müller`), adjacent ones joined. */
    decodeWords(value: string): string;
    /** The usual file extension of a MIME type (`application/pdf` → `pdf`, `text/calendar` → `ics`), `bin` for one it does not know. */
    detectExtension(mimeType: string): string;
  };
  export default libmime;
}
