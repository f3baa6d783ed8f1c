import request from 'supertest';
import { Language, Translation } from '../../src/db/models';
import { useApi } from '../helpers/app';
import { expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/core/language';
const SEEDED: Record<string, [string, number]> = {
  en: ['English', 1], fr: ['Français', 1], de: ['Deutsch', 1], es: ['Español', 1],
  it: ['Italiano', 0], nl: ['Nederlands', 0], pt: ['Português', 0],
};

async function listAll(query: Record<string, unknown> = {}) {
  return expectList(await api.get(BASE, { limit: 1000, ...query }));
}

/** A translation of a language's name, inserted directly (languages have no write endpoints). */
async function withTranslation<T>(code: string, locale: string, value: string, work: (languageId: number) => Promise<T>): Promise<T> {
  const language = await Language.findOne({ where: { code } });
  if (!language) throw new Error(`no language ${code}`);
  const where = { record_type: 'language', record_id: language.id, locale, field: 'name' };
  await Translation.destroy({ where });
  await Translation.create({ ...where, value });
  try {
    return await work(language.id);
  } finally {
    await Translation.destroy({ where });
  }
}

describe('GET /api/core/language', () => {
  it('lists the seeded languages with their fields and a translations array', async () => {
    const data = await listAll();
    for (const [code, [name, enabled]] of Object.entries(SEEDED)) {
      const item = data.find((l) => l.code === code);
      expect(item).toMatchObject({ code, name, enabled });
      expect(Array.isArray(item.translations)).toBe(true);
      for (const k of ['name', 'code', 'enabled', 'created_at', 'updated_at', 'translations']) expect(item).toHaveProperty(k);
      expect(Number.isInteger(item.created_at)).toBe(true);
      expect(Number.isInteger(item.updated_at)).toBe(true);
      expect(item.code).toMatch(/^[a-z]{2}$/);
    }
  });

  it('filters by enabled', async () => {
    const enabled = await listAll({ enabled: 1 });
    expect(enabled.every((l) => l.enabled === 1)).toBe(true);
    expect(enabled.map((l) => l.code)).toEqual(expect.arrayContaining(['en', 'fr', 'de', 'es']));
    expect(enabled.map((l) => l.code)).not.toEqual(expect.arrayContaining(['it']));

    const disabled = await listAll({ enabled: 0 });
    expect(disabled.every((l) => l.enabled === 0)).toBe(true);
    expect(disabled.map((l) => l.code)).toEqual(expect.arrayContaining(['it', 'nl', 'pt']));
    expect(disabled.map((l) => l.code)).not.toContain('en');
  });

  it('sorts by code', async () => {
    const data = await listAll({ order_column: 'code', order_direction: 'desc' });
    const seeded = data.map((l) => l.code).filter((c: string) => c in SEEDED);
    expect(seeded).toEqual(['pt', 'nl', 'it', 'fr', 'es', 'en', 'de']);
  });

  it('lists a translation of the name in translations when no lang is given', async () => {
    await withTranslation('de', 'fr', 'Allemand', async (id) => {
      const de = (await listAll()).find((l) => l.code === 'de');
      expect(de.name).toBe('Deutsch');
      expect(de.translations).toEqual([expect.objectContaining({ locale: 'fr', name: 'Allemand' })]);
      expect(de.translations[0].language_id).toBe(id);
    });
  });

  it('replaces the name with its translation in the lang locale, and keeps the default elsewhere', async () => {
    await withTranslation('de', 'fr', 'Allemand', async () => {
      const data = await listAll({ lang: 'fr' });
      const de = data.find((l) => l.code === 'de');
      expect(de.name).toBe('Allemand');
      const en = data.find((l) => l.code === 'en');
      expect(en.name).toBe('English');
      expect(Array.isArray(en.translations)).toBe(true);
    });
  });

  it('keeps the default name and lists translations when lang has no translation', async () => {
    await withTranslation('de', 'fr', 'Allemand', async () => {
      const de = (await listAll({ lang: 'es' })).find((l) => l.code === 'de');
      expect(de.name).toBe('Deutsch');
      expect(de.translations).toEqual([expect.objectContaining({ locale: 'fr', name: 'Allemand' })]);
    });
  });
});

describe('GET /api/core/language/{id}', () => {
  it('shows one language', async () => {
    const en = (await listAll()).find((l) => l.code === 'en');
    const shown = expectSuccess(await api.get(`${BASE}/${en.id}`));
    expect(shown).toEqual(en);
  });

  it('shows the translated name with lang', async () => {
    await withTranslation('es', 'fr', 'Espagnol', async (id) => {
      expect(expectSuccess(await api.get(`${BASE}/${id}`, { lang: 'fr' })).name).toBe('Espagnol');
      expect(expectSuccess(await api.get(`${BASE}/${id}`)).name).toBe('Español');
    });
  });

  it.each(['4294967295', 'abc'])('answers 404 for the id %s', async (id) => {
    expectNotFound(await api.get(`${BASE}/${id}`), 'language');
  });
});

describe('languages are read-only', () => {
  it('answers 405 to a create', async () => {
    const res = await request(api.app).post(BASE).auth(api.token, 'x').type('form').send({ name: 'Klingon', code: 'kl' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(res.body).toMatchObject({ status: 'error', data: null });
    expect((await listAll()).map((l) => l.code)).not.toContain('kl');
  });

  it('answers 405 to an update and a delete', async () => {
    const en = (await listAll()).find((l) => l.code === 'en');
    for (const method of ['put', 'delete'] as const) {
      const res = await request(api.app)[method](`${BASE}/${en.id}`).auth(api.token, 'x');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET');
    }
    expect(expectSuccess(await api.get(`${BASE}/${en.id}`))).toEqual(en);
  });
});
