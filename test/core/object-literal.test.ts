import { objectOfValuesFunction } from '../../src/lib/objectLiteral';
import { hasFastProperties } from '../helpers/v8Shape';

describe('objectOfValuesFunction (lib/objectLiteral.ts)', () => {
  const names = Array.from({ length: 40 }, (_, i) => `column_${i}`);

  it('builds plain objects of the names, in order, each of one compact shape', () => {
    const make = objectOfValuesFunction(names)!;
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
    const make = objectOfValuesFunction(odd)!;
    const row = make(odd.map((_, i) => i));
    expect(Object.entries(row)).toEqual(odd.map((n, i) => [n, i]));
  });

  it('gives no function for a list naming __proto__ (a literal would set the prototype)', () => {
    expect(objectOfValuesFunction(['id', '__proto__'])).toBeNull();
  });
});
