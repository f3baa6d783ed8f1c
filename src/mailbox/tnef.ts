/**
 * A minimal reader of TNEF (`winmail.dat`, application/ms-tnef): what Outlook and Exchange send
 * instead of ordinary MIME when "Rich Text" mail leaves the organisation. It takes out the files
 * (attAttachRenddata starts one, attAttachTitle/PR_ATTACH_LONG_FILENAME name it, attAttachData
 * holds it) and the plain text body (attBody, else PR_BODY in the message's MAPI properties) and
 * PR_BODY_HTML. A body sent only as compressed RTF is not read. [MS-OXTNEF]
 */

export interface TnefContent {
  files: Array<{ filename: string; contents: Buffer; mimeType: string | null }>;
  text: string | null;
  html: string | null;
}

const SIGNATURE = 0x223e9f78;
const LVL_MESSAGE = 1;
const LVL_ATTACHMENT = 2;
// Attribute ids (the low word; the high word is the attribute's type).
const ATT_BODY = 0x800c;
const ATT_ATTACH_DATA = 0x800f;
const ATT_ATTACH_TITLE = 0x8010;
const ATT_ATTACH_RENDDATA = 0x9002;
const ATT_MAPI_PROPS = 0x9003;
const ATT_ATTACHMENT = 0x9005;
// MAPI property ids and types.
const PR_BODY = 0x1000;
const PR_BODY_HTML = 0x1013;
const PR_ATTACH_DATA_BIN = 0x3701;
const PR_ATTACH_FILENAME = 0x3704;
const PR_ATTACH_LONG_FILENAME = 0x3707;
const PR_ATTACH_MIME_TAG = 0x370e;
const PT_STRING8 = 0x001e;
const PT_UNICODE = 0x001f;
const PT_BINARY = 0x0102;
const MV_FLAG = 0x1000;
const FIXED: Record<number, number> = { 0x0002: 4, 0x0003: 4, 0x0004: 4, 0x0005: 8, 0x0006: 8, 0x0007: 8, 0x000a: 4, 0x000b: 4, 0x0014: 8, 0x0040: 8, 0x0048: 16 };

export class TnefError extends Error {}

/** Whether a MIME part is TNEF: by its type, or by the name Outlook gives it. */
export const isTnef = (contentType: string, filename: string | undefined) =>
  /^application\/(vnd\.)?ms-tnef$/i.test(contentType) || /^winmail\.dat$/i.test(filename ?? '');

type Prop = { id: number; type: number; values: Buffer[] };

const pad4 = (n: number) => (n + 3) & ~3;

/** The MAPI properties of an attMAPIProps or attAttachment attribute. */
function readProps(data: Buffer): Prop[] {
  const props: Prop[] = [];
  let p = 0;
  const need = (n: number) => {
    if (p + n > data.length) throw new TnefError('MAPI properties end early');
  };
  need(4);
  const count = data.readUInt32LE(p);
  p += 4;
  for (let i = 0; i < count && i < 10_000; i++) {
    need(4);
    const type = data.readUInt16LE(p);
    const id = data.readUInt16LE(p + 2);
    p += 4;
    if (id >= 0x8000) { // a named property: its GUID and its name or number
      need(20);
      const kind = data.readUInt32LE(p + 16);
      p += 20;
      if (kind === 0) { need(4); p += 4; } else {
        need(4);
        const len = data.readUInt32LE(p);
        p += 4 + pad4(len);
      }
    }
    const base = type & ~MV_FLAG;
    const multi = (type & MV_FLAG) !== 0;
    const values: Buffer[] = [];
    if (FIXED[base] !== undefined && !multi) {
      need(FIXED[base]);
      values.push(data.subarray(p, p + FIXED[base]));
      p += pad4(FIXED[base]);
    } else {
      need(4);
      const n = data.readUInt32LE(p);
      p += 4;
      for (let v = 0; v < n && v < 10_000; v++) {
        if (FIXED[base] !== undefined) {
          need(FIXED[base]);
          values.push(data.subarray(p, p + FIXED[base]));
          p += pad4(FIXED[base]);
          continue;
        }
        need(4);
        const len = data.readUInt32LE(p);
        p += 4;
        need(len);
        values.push(data.subarray(p, p + len));
        p += pad4(len);
      }
    }
    props.push({ id, type: base, values });
  }
  return props;
}

const cString = (b: Buffer, encoding: BufferEncoding = 'latin1') => {
  const s = b.toString(encoding);
  const nul = s.indexOf('\0');
  return nul < 0 ? s : s.slice(0, nul);
};

const propString = (prop: Prop | undefined): string | null => {
  if (!prop?.values.length) return null;
  if (prop.type === PT_UNICODE) return cString(prop.values[0], 'utf16le');
  if (prop.type === PT_STRING8) return cString(prop.values[0], 'utf8');
  if (prop.type === PT_BINARY) return prop.values[0].toString('utf8');
  return null;
};

export function readTnef(data: Buffer): TnefContent {
  if (data.length < 6 || data.readUInt32LE(0) !== SIGNATURE) throw new TnefError('not TNEF: the signature is missing');
  const out: TnefContent = { files: [], text: null, html: null };
  let current: { filename: string | null; longName: string | null; contents: Buffer | null; mimeType: string | null } | null = null;
  const flush = () => {
    if (current?.contents) out.files.push({ filename: current.longName || current.filename || `attachment-${out.files.length + 1}.bin`, contents: current.contents, mimeType: current.mimeType });
    current = null;
  };
  let p = 6;
  while (p < data.length) {
    if (p + 9 > data.length) throw new TnefError('an attribute ends early');
    const level = data.readUInt8(p);
    const id = data.readUInt32LE(p + 1) & 0xffff;
    const length = data.readUInt32LE(p + 5);
    const start = p + 9;
    if (start + length + 2 > data.length) throw new TnefError('an attribute is longer than the file');
    const value = data.subarray(start, start + length);
    p = start + length + 2; // the checksum is not checked: a wrong one still carries the data
    if (level === LVL_ATTACHMENT) {
      if (id === ATT_ATTACH_RENDDATA) {
        flush();
        current = { filename: null, longName: null, contents: null, mimeType: null };
      } else if (current) {
        if (id === ATT_ATTACH_TITLE) current.filename = cString(value);
        else if (id === ATT_ATTACH_DATA) current.contents = value;
        else if (id === ATT_ATTACHMENT) {
          const props = readProps(value);
          const find = (pid: number) => props.find((x) => x.id === pid);
          current.longName = propString(find(PR_ATTACH_LONG_FILENAME)) || propString(find(PR_ATTACH_FILENAME)) || current.longName;
          current.mimeType = propString(find(PR_ATTACH_MIME_TAG));
          const bin = find(PR_ATTACH_DATA_BIN);
          // Only PT_BINARY data is a file (PT_OBJECT, an embedded message, is left out).
          if (!current.contents && bin?.type === PT_BINARY && bin.values[0]) current.contents = bin.values[0];
        }
      }
    } else if (level === LVL_MESSAGE) {
      if (id === ATT_BODY) out.text = cString(value);
      else if (id === ATT_MAPI_PROPS) {
        const props = readProps(value);
        const body = props.find((x) => x.id === PR_BODY);
        const html = props.find((x) => x.id === PR_BODY_HTML);
        out.text = out.text ?? propString(body);
        out.html = propString(html);
      }
    }
  }
  flush();
  return out;
}
