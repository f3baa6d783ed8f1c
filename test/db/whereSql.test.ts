/**
 * db/whereSql.ts: Sequelize's rendering of a where, kept by the where's content. Each where
 * renders as Sequelize's query generator renders it; a where of the same content (another object,
 * as each request builds its own) is not rendered again; wheres that differ in anything
 * Sequelize renders (a value's type, an operator, a literal's text, a key's order) get their own
 * text; a where holding something else than plain values (a Date) is rendered each time.
 */
import { Op, literal, type WhereOptions } from 'sequelize';
import { Ticket, User } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { whereSql } from '../../src/db/whereSql';

type Generator = { whereItemsQuery(w: WhereOptions, o: object): string };
const generator = () => sequelize().getQueryInterface().queryGenerator as unknown as Generator;
const direct = (where: WhereOptions, model: typeof Ticket | typeof User = Ticket, prefix = '`Ticket`') =>
  generator().whereItemsQuery(where, { model, prefix });

/** Renders `make()`'s where twice (two objects of the same content): the texts, and Sequelize's renders for each. */
function twice(make: () => WhereOptions, model: typeof Ticket | typeof User = Ticket, prefix = '`Ticket`') {
  const spy = jest.spyOn(generator(), 'whereItemsQuery');
  try {
    const first = whereSql(model, make(), prefix);
    // (Sequelize renders an operator's items by calling itself: several calls for one where.)
    const firstRenders = spy.mock.calls.length;
    const second = whereSql(model, make(), prefix);
    return { texts: [first, second], firstRenders, secondRenders: spy.mock.calls.length - firstRenders };
  } finally {
    spy.mockRestore();
  }
}

// Distinct values per run: a where kept by an earlier test of the file would not be rendered at all.
let n = 1000;
const fresh = () => ++n;

const wheres: Array<[string, () => WhereOptions]> = [
  ['a value', () => ({ status_id: 3 })],
  ['a string with quotes', () => ({ subject: "it's \"quoted\" \\ and ; more" })],
  ['a list', () => ({ department_id: { [Op.in]: [1, 2, 3] } })],
  ['null', () => ({ deleted_at: null, merged_into_id: null })],
  ['operators and a literal', () => ({ [Op.and]: [{ priority_id: 2 }, literal('(`Ticket`.`id` IN (SELECT ticket_id FROM ticket_tag_links WHERE tag_id = :b1))')] })],
  ['an or of ranges', () => ({ [Op.or]: [{ created_at: { [Op.gte]: 10, [Op.lt]: 20 } }, { updated_at: { [Op.between]: [1, 2] } }] })],
];

describe('whereSql', () => {
  it.each(wheres)('%s: renders as Sequelize does, once for two wheres of the same content', (_name, make) => {
    const expected = direct(make());
    expect(expected).not.toBe('');
    const { texts, secondRenders } = twice(make);
    expect(texts).toEqual([expected, expected]);
    expect(secondRenders).toBe(0);
  });

  it('a where not seen before is rendered once, then kept', () => {
    const id = fresh();
    const { texts, firstRenders, secondRenders } = twice(() => ({ status_id: id, [Op.or]: [{ locked: 0 }, { internal: 1 }] }));
    expect(firstRenders).toBeGreaterThan(0);
    expect(secondRenders).toBe(0);
    expect(texts[0]).toBe(direct({ status_id: id, [Op.or]: [{ locked: 0 }, { internal: 1 }] }));
    expect(texts[1]).toBe(texts[0]);
  });

  // Each through the kept renderings in turn: a key shared by two wheres would answer the
  // second with the first's text.
  it('wheres that differ in what Sequelize renders get their own text', () => {
    const id = fresh();
    const variants: WhereOptions[] = [
      { status_id: String(id) },
      { status_id: id },
      { subject: id },
      // (A string that reads as another value's mark in the key.)
      { subject: `#${id};` },
      { subject: 'N' },
      { subject: { [Op.ne]: id } },
      { subject: { [Op.gt]: id } },
      { [Op.or]: [{ subject: id }, { number: id }] },
      { [Op.and]: [{ subject: id }, { number: id }] },
      { number: id, subject: id },
      { subject: id, number: id },
      { subject: [id] },
      { subject: null },
      { [Op.and]: [literal(`(a = ${id})`)] },
      { [Op.and]: [literal(`(a = ${id} )`)] },
      { subject: true },
    ];
    const texts = variants.map((w) => whereSql(Ticket, w, '`Ticket`'));
    expect(texts).toEqual(variants.map((w) => direct(w)));
    expect(new Set(texts).size).toBe(variants.length);
  });

  it('the model and the prefix are part of what is kept', () => {
    const id = fresh();
    expect(whereSql(Ticket, { id }, '`Ticket`')).toBe(direct({ id }));
    expect(whereSql(Ticket, { id }, '`t`')).toBe(direct({ id }, Ticket, '`t`'));
    expect(whereSql(User, { id }, '`User`')).toBe(direct({ id }, User, '`User`'));
    expect(new Set([whereSql(Ticket, { id }, '`Ticket`'), whereSql(Ticket, { id }, '`t`'), whereSql(User, { id }, '`User`')]).size).toBe(3);
  });

  it('a where holding a Date is rendered each time', () => {
    const day = fresh() % 28 + 1;
    const { texts, firstRenders, secondRenders } = twice(() => ({ subject: new Date(Date.UTC(2024, 0, day)) }));
    expect([firstRenders, secondRenders]).toEqual([1, 1]);
    expect(texts[1]).toBe(texts[0]);
  });
});
