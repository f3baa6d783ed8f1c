import { objectOfValues, picker } from '../../src/lib/objectLiteral';
import { pick } from '../../src/lib/serialize';
import { hasFastProperties } from '../helpers/v8Shape';

describe('objectOfValues (lib/objectLiteral.ts)', () => {
  const names = Array.from({ length: 40 }, (_, i) => `column_${i}`);

  it('builds plain objects of the names, in order, each of one compact shape', () => {
    const make = objectOfValues(names);
    const rows = [0, 1].map((r) => make(names.map((_, i) => r * 100 + i)));
    for (const [r, row] of rows.entries()) {
      expect(Object.keys(row)).toEqual(names);
      expect(row.column_0).toBe(r * 100);
      expect(row.column_39).toBe(r * 100 + 39);
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      expect(hasFastProperties(row)).toBe(true);
    }
  });

  it('keeps any name a key: quotes, backslashes, line breaks and code in a name never become code', () => {
    const odd = ['a"b', 'back\\slash', 'line\nbreak', 'sep\u2028arator', '"}; throw new Error("escaped"); ({"', "it's", ''];
    const make = objectOfValues(odd);
    const row = make(odd.map((_, i) => i));
    expect(Object.entries(row)).toEqual(odd.map((n, i) => [n, i]));
  });

  it('makes one function per list of names, kept; a __proto__ an own property; two equal names refused', () => {
    expect(objectOfValues([...names])).toBe(objectOfValues(names));
    const row = objectOfValues(['id', '__proto__'])([1, { polluted: true }]);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.keys(row)).toEqual(['id', '__proto__']);
    expect((row as { polluted?: boolean }).polluted).toBeUndefined();
    expect(() => objectOfValues(['id', 'name', 'id'])).toThrow('duplicate field name `id`');
  });
});

describe('pick (lib/serialize.ts) and picker', () => {
  const names = Array.from({ length: 30 }, (_, i) => `field_${i}`);
  const record = Object.fromEntries(names.map((n, i) => [n, i % 3 === 0 ? null : i % 3 === 1 ? `v${i}` : i]));

  it('gives each list of names one compact shape, however many names, and reads getters (a model instance)', () => {
    // A row as db/rowObjects.ts gives it. Copied a property at a time under computed names, such
    // rows made hash tables in the web process (the user list's people: docs/performance.md).
    const row = objectOfValues(names)(names.map((n) => record[n]));
    const a = pick(row, names);
    const b = pick({ ...row, field_8: 'other' }, [...names]);
    expect(hasFastProperties(a)).toBe(true);
    expect(hasFastProperties(b)).toBe(true);
    expect(JSON.stringify(a)).toBe(JSON.stringify(record));
    const model = Object.defineProperty({}, 'field_3', { get: () => 'from a getter', enumerable: false });
    expect(pick(model, ['field_3', 'field_4'])).toEqual({ field_3: 'from a getter', field_4: null });
  });

  it('presents the named values in the order of the names, null for an unset one, other values as they are', () => {
    const partial = { ...record, field_1: undefined, field_2: 0, field_4: '', field_5: false };
    delete (partial as Record<string, unknown>).field_7;
    const out = pick(partial, names);
    expect(Object.keys(out)).toEqual(names);
    expect(out).toMatchObject({ field_0: null, field_1: null, field_2: 0, field_4: '', field_5: false, field_7: null, field_8: 8, field_10: 'v10' });
  });

  it('keeps odd names keys, and a __proto__ an own property', () => {
    const odd = ['a"b', 'line\nbreak', '"}; throw new Error("escaped"); ({"', ''];
    expect(picker(odd)(Object.fromEntries(odd.map((n, i) => [n, i])))).toEqual(Object.fromEntries(odd.map((n, i) => [n, i])));
    // One function per list: by the list itself, and by its names for a list made anew.
    expect(picker(odd)).toBe(picker([...odd]));
    const withProto = JSON.parse('{"id": 1, "__proto__": {"polluted": true}}');
    const out = pick(withProto, ['id', '__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['id', '__proto__']);
    expect((out as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
