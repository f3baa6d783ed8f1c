/**
 * The resource builder's behaviour that every resource inherits: updated_at, parameters sent in
 * the query string, updates racing deletes, custom actions, list params and default list
 * conditions; and the group endpoints the official PHP client looks up.
 */
import express from 'express';
import request from 'supertest';
import { Op } from 'sequelize';
import { Brand, Group, IpBan, Language, SpamRule, Translation, User } from '../../src/db/models';
import { presentTranslated } from '../../src/translations';
import { errorHandler } from '../../src/http/errors';
import { bodyParsers } from '../../src/http/body';
import { resourceRouter, type ResourceDef } from '../../src/http/resource';
import { Joi, field } from '../../src/lib/validation';
import { flagFilter } from '../../src/http/listQuery';
import { pick } from '../../src/lib/serialize';
import { useApi, unique, newEmail, nowSec } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';
import { uniqueIpv4 } from './support';

const api = useApi();
const marker = unique('found');

/** Moves a record's timestamps into the past (instead of sleeping), as if it was made long ago. */
async function age(model: typeof SpamRule | typeof IpBan | typeof Brand | typeof User, id: number, seconds = 100) {
  const t = nowSec() - seconds;
  await (model as any).update({ created_at: t, updated_at: t }, { where: { id }, hooks: false });
  return t;
}

describe('updated_at', () => {
  it.each([
    ['ban', '/api/core/ipban', IpBan, () => ({ ip: uniqueIpv4(), type: 1 }), { reason: 'changed' }],
    ['spam rule', '/api/core/spamrule', SpamRule, () => ({ text: unique('upd'), type: 0 }), { text: unique('upd2') }],
    ['brand', '/api/core/brand', Brand, () => ({ name: unique('Brand') }), { name: unique('Renamed') }],
    ['user', '/api/user/user', User, () => ({ email: newEmail() }), { firstname: 'Changed' }],
  ] as const)('moves forward when a %s is updated, and updated_at_min finds the edit', async (_label, path, model, body, change) => {
    const created = expectSuccess(await api.post(path, body()), expect.any(String) as unknown as string);
    const before = await age(model, created.id);
    const updated = expectSuccess(await api.put(`${path}/${created.id}`, change), expect.any(String) as unknown as string);
    expect(updated.created_at).toBe(before);
    expect(updated.updated_at).toBeGreaterThanOrEqual(nowSec() - 2);
    if (path === '/api/user/user') {
      const found = expectList(await api.get(path, { updated_at_min: nowSec() - 5, email: created.email }));
      expect(found.map((u) => u.id)).toEqual([created.id]);
    }
  });

  it('moves forward when only related records change (a user\'s groups)', async () => {
    const group = await Group.findOne({ where: { type: 'user' } });
    const user = expectSuccess(await api.post('/api/user/user', { email: newEmail() }), 'Successfully created new user!');
    const before = await age(User, user.id);
    const updated = expectSuccess(await api.put(`/api/user/user/${user.id}`, { groups: [group!.id] }), 'Successfully updated the user!');
    expect(updated.groups.map((g: any) => g.id)).toEqual([group!.id]);
    expect(updated.updated_at).toBeGreaterThan(before);
  });

  it('stays put on a show', async () => {
    const rule = expectSuccess(await api.post('/api/core/spamrule', { text: unique('show'), type: 0 }), 'Successfully created new spam rule!');
    const before = await age(SpamRule, rule.id);
    expect(expectSuccess(await api.get(`/api/core/spamrule/${rule.id}`)).updated_at).toBe(before);
  });
});

describe('parameters in the query string (as the n8n node sends them)', () => {
  it('creates from query parameters alone', async () => {
    const text = unique('query');
    const res = await request(api.app).post(`/api/core/spamrule?text=${text}&type=2&event_comment=0`).auth(api.token, 'x');
    const rule = expectSuccess(res, 'Successfully created new spam rule!');
    expect(rule).toMatchObject({ text, type: 2, event_comment: 0, event_message: 1 });
  });

  it('updates from query parameters; the body wins on a clash', async () => {
    const rule = expectSuccess(await api.post('/api/core/spamrule', { text: unique('clash'), type: 0 }), 'Successfully created new spam rule!');
    const res = await request(api.app).put(`/api/core/spamrule/${rule.id}?text=fromquery&type=1`).auth(api.token, 'x').type('form').send('text=frombody');
    expect(expectSuccess(res, 'Successfully updated the spam rule!')).toMatchObject({ text: 'frombody', type: 1 });
  });

  it('validates query parameters like body ones', async () => {
    const res = await request(api.app).post('/api/core/spamrule?type=7').auth(api.token, 'x');
    expectError(res, 422, 'The text field is required.');
  });
});

describe('an update racing a delete', () => {
  it('answers 200 or 404, never 500, and leaves no record behind', async () => {
    for (let round = 0; round < 10; round++) {
      const rule = expectSuccess(await api.post('/api/core/spamrule', { text: unique('race'), type: 0 }), 'Successfully created new spam rule!');
      const [put, del] = await Promise.all([
        api.put(`/api/core/spamrule/${rule.id}`, { text: unique('racing') }),
        api.del(`/api/core/spamrule/${rule.id}`),
      ]);
      expect([200, 404]).toContain(put.status);
      expect(del.status).toBe(200);
      if (put.status === 404) expectNotFound(put, 'spam rule');
      expect(await SpamRule.findByPk(rule.id)).toBeNull();
    }
  });
});

describe('user and operator groups', () => {
  it('lists operator groups with administrator, and user groups without', async () => {
    const operatorGroups = expectList(await api.get('/api/user/operatorgroup'));
    expect(operatorGroups.length).toBeGreaterThan(0);
    expect(Object.keys(operatorGroups[0]).sort()).toEqual(['administrator', 'colour', 'created_at', 'description', 'id', 'name', 'updated_at']);
    const userGroups = expectList(await api.get('/api/user/usergroup'));
    expect(userGroups.length).toBeGreaterThan(0);
    expect(Object.keys(userGroups[0]).sort()).toEqual(['colour', 'created_at', 'description', 'id', 'name', 'updated_at']);
    expect(new Set(operatorGroups.map((g) => g.id)).has(userGroups[0].id)).toBe(false);
  });

  it('shows one group, and only of its kind', async () => {
    const admins = await Group.findOne({ where: { type: 'operator', administrator: 1 } });
    expect(expectSuccess(await api.get(`/api/user/operatorgroup/${admins!.id}`))).toMatchObject({ id: admins!.id, name: admins!.name, administrator: 1 });
    expectNotFound(await api.get(`/api/user/usergroup/${admins!.id}`), 'user group');
  });

  it('pages and orders', async () => {
    await Group.bulkCreate([{ type: 'user', name: unique('G') }, { type: 'user', name: unique('G') }]);
    const all = await api.get('/api/user/usergroup', { limit: 1000 });
    const page = expectList(await api.get('/api/user/usergroup', { start: 2, limit: 1 }));
    expect(page.map((g) => g.id)).toEqual([all.body.data[1].id]);
    expect(all.body.count).toBe(await Group.count({ where: { type: 'user' } }));
  });
});

describe('the resource builder', () => {
  // A resource of the test's own on spam rules: a custom action on a record, one on the
  // collection, a show that answers an array of one, list params and a default list condition.
  const marker = unique('builder');
  const def: ResourceDef<SpamRule> = {
    path: '/rule',
    model: SpamRule,
    label: 'rule',
    actions: ['list', 'update'],
    filters: { event_comment: flagFilter('event_comment') },
    listParams: { include_content: field.flag().default(0) },
    // Content rules (type 0) are left out unless asked for, as trashed tickets will be.
    listScope: (params) => (params.include_content ? { text: { [Op.like]: `${marker}%` } } : { text: { [Op.like]: `${marker}%` }, type: { [Op.ne]: 0 } }),
    updateSchema: Joi.object({ text: field.string() }),
    serialize: (r, _rel, ctx) => ({ ...pick(r, ['id', 'text', 'type']), view: ctx.view, query: ctx.query.include_content ?? null }),
    custom: [
      {
        name: 'flip', method: 'POST', path: '/:id/flip', schema: Joi.object({ to: Joi.number().valid(0, 1, 2).required() }),
        message: 'Flipped.',
        run: async ({ record, input, transaction }) => {
          await record!.update({ type: input.to }, { transaction });
          return record!;
        },
      },
      { name: 'show', method: 'GET', path: '/:id', asArray: true, run: async ({ record }) => record! },
      {
        name: 'count', method: 'GET', path: '/tally', schema: Joi.object({ type: Joi.number().integer() }),
        run: async ({ input }) => SpamRule.findAll({ where: { text: { [Op.like]: `${marker}%` }, ...(input.type !== undefined ? { type: input.type } : {}) }, order: [['id', 'ASC']] }),
      },
    ],
  };
  const app = express();
  app.use(...bodyParsers('1mb'), resourceRouter(def), errorHandler);
  const rules: SpamRule[] = [];

  beforeAll(async () => {
    for (const type of [0, 1, 2]) rules.push(await SpamRule.create({ text: `${marker}-${type}`, type }));
  });

  it('runs a custom action on a record in a transaction and presents it', async () => {
    const res = await request(app).post(`/rule/${rules[1].id}/flip`).type('form').send('to=2');
    expect(expectSuccess(res, 'Flipped.')).toMatchObject({ id: rules[1].id, type: 2, view: 'show' });
    expect((await SpamRule.findByPk(rules[1].id))!.type).toBe(2);
    await SpamRule.update({ type: 1 }, { where: { id: rules[1].id } });
  });

  it('answers 404 with the label before validating a custom action', async () => {
    expectNotFound(await request(app).post('/rule/4294967295/flip').type('form').send(''), 'rule');
    expectError(await request(app).post(`/rule/${rules[1].id}/flip`).type('form').send('to=9'), 422, 'The selected to is invalid.');
  });

  it('answers a show declared as an action with an array of one', async () => {
    const res = await request(app).get(`/rule/${rules[0].id}`);
    expect(expectSuccess(res)).toEqual([{ id: rules[0].id, text: rules[0].text, type: 0, view: 'show', query: null }]);
  });

  it('runs a collection action with validated query parameters', async () => {
    const res = await request(app).get('/rule/tally').query({ type: 2 });
    expect(expectSuccess(res).map((r: any) => r.id)).toEqual([rules[2].id]);
  });

  it('applies the default list condition unless the list params lift it, and hands the params to the presenter', async () => {
    expect(expectList(await request(app).get('/rule')).map((r) => r.id)).toEqual([rules[1].id, rules[2].id]);
    const all = expectList(await request(app).get('/rule').query({ include_content: 1 }));
    expect(all.map((r) => r.id)).toEqual(rules.map((r) => r.id));
    expect(all[0]).toMatchObject({ view: 'list', query: 1 });
  });

  it('answers a method the route does not offer with 405 and the methods it does', async () => {
    const res = await request(app).delete(`/rule/${rules[0].id}`);
    expectError(res, 405, 'The DELETE method is not supported here. Supported methods: GET, PUT.');
    expect((await request(app).get(`/rule/${rules[0].id}/flip`)).headers.allow).toBe('POST');
  });
});

describe('embedded records with translations', () => {
  it('are presented in lang when translated, else with their translations array', async () => {
    const spec = { type: 'language', key: 'language_id', fields: ['name'] } as const;
    const languages = await Language.findAll({ order: [['id', 'ASC']], limit: 2 });
    // A locale no other test reads, removed afterwards: test files of a worker share the database.
    const row = await Translation.create({ record_type: 'language', record_id: languages[0].id, locale: 'eo', field: 'name', value: `Nom ${marker}` });
    const serialize = (l: Language) => pick(l, ['id', 'name']);
    try {
      const inEsperanto = await presentTranslated(spec, languages, serialize, 'eo');
      expect(inEsperanto.get(languages[0].id)).toEqual({ id: languages[0].id, name: `Nom ${marker}` });
      const plain = await presentTranslated(spec, languages, serialize);
      expect(plain.get(languages[0].id)!.translations).toEqual(expect.arrayContaining([{ language_id: languages[0].id, name: `Nom ${marker}`, locale: 'eo' }]));
      if (languages[1]) expect(plain.get(languages[1].id)).toMatchObject({ id: languages[1].id, name: languages[1].name });
    } finally {
      await row.destroy();
    }
  });
});
