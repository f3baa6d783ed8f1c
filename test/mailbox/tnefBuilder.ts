/** Builds TNEF (winmail.dat) files byte by byte as [MS-OXTNEF] lays them out (not a test file itself). */
const u8 = (n: number) => Buffer.from([n]);
export const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b; };
export const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n >>> 0); return b; };
export const padded = (b: Buffer) => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
const checksum = (b: Buffer) => u16(b.reduce((s, x) => (s + x) & 0xffff, 0));

/** One attribute: level, id (type in the high word), length, data, checksum. */
export const attribute = (level: number, id: number, data: Buffer) => Buffer.concat([u8(level), u32(id), u32(data.length), data, checksum(data)]);

/** A MAPI property block: count, then (type, id, value) with variable values counted and padded. */
export function props(list: Array<{ type: number; id: number; value: Buffer }>): Buffer {
  return Buffer.concat([u32(list.length), ...list.map((p) => Buffer.concat([
    u16(p.type), u16(p.id),
    ...([0x1e, 0x1f, 0x102].includes(p.type) ? [u32(1), u32(p.value.length), padded(p.value)] : [padded(p.value)]),
  ]))]);
}

export const tnef = (...attributes: Buffer[]) => Buffer.concat([u32(0x223e9f78), u16(0x1234), ...attributes]);
export const z = (s: string, enc: BufferEncoding = 'latin1') => Buffer.from(`${s}\0`, enc);

