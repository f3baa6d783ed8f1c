// Imported first by attachment.test.ts: small attachment limits (2 KiB a file, 3 KiB a request),
// before any module reads the configuration.
process.env.ATTACHMENT_MAX_BYTES = '2048';
process.env.ATTACHMENTS_MAX_BYTES = '3072';
