/**
 * Field rules shared by users, operators, organisations and brands: IANA time zones (current and
 * legacy names), assigned ISO 3166-1 country codes, enabled languages, and no control characters
 * in one-line fields (multi-line texts keep their line breaks).
 */
import { randomBytes } from 'node:crypto';
import { Group, Language, Organisation, User } from '../../src/db/models';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectError, expectSuccess } from '../helpers/envelope';

const api = useApi();
const USERS = '/api/user/user';
const OPERATORS = '/api/user/operator';
const ORGS = '/api/user/organisation';
const BRANDS = '/api/core/brand';

let adminGroupId: number;
beforeAll(async () => {
  adminGroupId = (await Group.findOne({ where: { type: 'operator', name: 'Administrators' } }))!.id;
  // The seed ships Italian disabled; the tests rely on it.
  expect(await Language.findOne({ where: { code: 'it' }, raw: true })).toMatchObject({ enabled: 0 });
});

const operatorForm = (form: Record<string, unknown> = {}) => ({ firstname: 'Op', lastname: unique('Erator'), email: newEmail('op'), groups: [adminGroupId], ...form });
const created = async (res: Promise<any> | any, label: string) => expectSuccess(await res, `Successfully created new ${label}!`);

// ---- time zones -----------------------------------------------------------------------------------

describe('timezone', () => {
  const current = ['Asia/Kolkata', 'Europe/Kyiv', 'Etc/UTC', 'UTC', 'America/New_York', 'Europe/London', 'Etc/GMT+5'];
  const legacy = ['Asia/Calcutta', 'Europe/Kiev', 'US/Eastern', 'America/Buenos_Aires', 'GMT'];

  it.each([...current, ...legacy])('accepts %s for users, operators, organisations and brands', async (timezone) => {
    expect((await created(api.post(USERS, { email: newEmail(), timezone }), 'user')).timezone).toBe(timezone);
    expect((await created(api.post(OPERATORS, operatorForm({ timezone })), 'operator')).timezone).toBe(timezone);
    expect((await created(api.post(ORGS, { name: unique('Tz'), timezone }), 'organisation')).timezone).toBe(timezone);
    expect((await created(api.post(BRANDS, { name: unique('Tz'), default_timezone: timezone }), 'brand')).default_timezone).toBe(timezone);
  });

  it.each(['Mars/Olympus_Mons', 'Europe/Atlantis', 'asia/kolkata', 'utc', 'EUROPE/LONDON', '+05:00', 'Etc/Unknown', 'Europe/London/Extra'])('refuses %s', async (timezone) => {
    const firstname = unique('Tz');
    expectError(await api.post(USERS, { email: newEmail(), firstname, timezone }), 422, 'The selected timezone is invalid.');
    expect(await User.count({ where: { firstname } })).toBe(0);
    expectError(await api.post(OPERATORS, operatorForm({ timezone })), 422, 'The selected timezone is invalid.');
    expectError(await api.post(ORGS, { name: unique('Tz'), timezone }), 422, 'The selected timezone is invalid.');
    expectError(await api.post(BRANDS, { name: unique('Tz'), default_timezone: timezone }), 422, 'The selected default timezone is invalid.');
  });

  it('on update too, and a brand keeps `default`', async () => {
    const u = await created(api.post(USERS, { email: newEmail() }), 'user');
    expectError(await api.put(`${USERS}/${u.id}`, { timezone: 'Nowhere/Land' }), 422, 'The selected timezone is invalid.');
    expect(expectSuccess(await api.put(`${USERS}/${u.id}`, { timezone: 'Asia/Kolkata' }), 'Successfully updated the user!').timezone).toBe('Asia/Kolkata');
    expect((await created(api.post(BRANDS, { name: unique('Tz'), default_timezone: 'default' }), 'brand')).default_timezone).toBe('default');
  });
});

// ---- countries ------------------------------------------------------------------------------------

describe('country', () => {
  it.each([['GB', 'GB'], ['gb', 'GB'], ['AQ', 'AQ'], ['ss', 'SS'], ['UM', 'UM']])('accepts %s as %s', async (country, stored) => {
    expect((await created(api.post(USERS, { email: newEmail(), country }), 'user')).country).toBe(stored);
    expect((await created(api.post(OPERATORS, operatorForm({ country })), 'operator')).country).toBe(stored);
    expect((await created(api.post(ORGS, { name: unique('Cc'), country }), 'organisation')).country).toBe(stored);
    expect((await created(api.post(BRANDS, { name: unique('Cc'), default_country: country }), 'brand')).default_country).toBe(stored);
  });

  // UK is reserved (the code is GB); EU is an exceptional reservation; XX, ZZ, XK and AA are
  // user-assigned; AC and TA are phone regions (libphonenumber), not ISO 3166-1 countries.
  it.each(['XX', 'ZZ', 'UK', 'EU', 'XK', 'AA', 'AC', 'TA', 'uk'])('refuses %s', async (country) => {
    expectError(await api.post(USERS, { email: newEmail(), country }), 422, 'The selected country is invalid.');
    expectError(await api.post(OPERATORS, operatorForm({ country })), 422, 'The selected country is invalid.');
    expectError(await api.post(ORGS, { name: unique('Cc'), country }), 422, 'The selected country is invalid.');
    expectError(await api.post(BRANDS, { name: unique('Cc'), default_country: country }), 422, 'The selected default country is invalid.');
  });

  it('keeps the format message for what is no two-letter code, and `default` for brands', async () => {
    expectError(await api.post(USERS, { email: newEmail(), country: 'GBR' }), 422, 'The country format is invalid.');
    expect((await created(api.post(BRANDS, { name: unique('Cc'), default_country: 'default' }), 'brand')).default_country).toBe('default');
  });
});

// ---- languages ------------------------------------------------------------------------------------

describe('language_code', () => {
  it('must name an enabled language: Italian ships disabled', async () => {
    const firstname = unique('Lang');
    expectError(await api.post(USERS, { email: newEmail(), firstname, language_code: 'it' }), 422, 'The selected language code is invalid.');
    expect(await User.count({ where: { firstname } })).toBe(0);
    expectError(await api.post(OPERATORS, operatorForm({ language_code: 'IT' })), 422, 'The selected language code is invalid.');
    const name = unique('Lang');
    expectError(await api.post(ORGS, { name, language_code: 'it' }), 422, 'The selected language code is invalid.');
    expect(await Organisation.count({ where: { name } })).toBe(0);
    const u = await created(api.post(USERS, { email: newEmail(), language_code: 'fr' }), 'user');
    expectError(await api.put(`${USERS}/${u.id}`, { language_code: 'it' }), 422, 'The selected language code is invalid.');
  });

  it('a brand default_language too (or `default`)', async () => {
    expectError(await api.post(BRANDS, { name: unique('Lang'), default_language: 'it' }), 422, 'The selected default language is invalid.');
    expectError(await api.post(BRANDS, { name: unique('Lang'), default_language: 'klingon' }), 422, 'The selected default language is invalid.');
    const brand = await created(api.post(BRANDS, { name: unique('Lang'), default_language: 'FR' }), 'brand');
    expect(brand.default_language).toBe('fr');
    expectError(await api.put(`${BRANDS}/${brand.id}`, { default_language: 'nl' }), 422, 'The selected default language is invalid.');
    expect(expectSuccess(await api.put(`${BRANDS}/${brand.id}`, { default_language: 'default' }), 'Successfully updated the brand!').default_language).toBe('default');
  });

  it('a language enabled later is accepted', async () => {
    const code = 'pt';
    await Language.update({ enabled: 1 }, { where: { code } });
    try {
      expect((await created(api.post(USERS, { email: newEmail(), language_code: code }), 'user')).language_code).toBe(code);
    } finally {
      await Language.update({ enabled: 0 }, { where: { code } });
    }
  });
});

// ---- control characters ---------------------------------------------------------------------------

describe('control characters', () => {
  const controls: Array<[string, string]> = [['NUL', '\u0000'], ['LF', '\n'], ['CR', '\r'], ['ESC', '\u001b'], ['DEL', '\u007f'], ['VT', '\u000b']];

  it.each(controls)('%s is refused inside one-line person fields, form or JSON', async (_name, c) => {
    for (const send of [api.post, api.postJson]) {
      expectError(await send(USERS, { email: newEmail(), firstname: `Ada${c}Lovelace` }), 422, 'The firstname must not contain control characters.');
      expectError(await send(USERS, { email: newEmail(), lastname: `Love${c}lace` }), 422, 'The lastname must not contain control characters.');
      expectError(await send(USERS, { email: `ada${c}x@example.com` }), 422, 'The email must not contain control characters.');
      expectError(await send(USERS, { email: newEmail(), additional_email: [`ada${c}x@example.com`] }), 422, 'The additional email.0 must not contain control characters.');
      expectError(await send(USERS, { email: newEmail(), organisation: `Acme${c}Ltd` }), 422, 'The organisation must not contain control characters.');
      expectError(await send(OPERATORS, operatorForm({ lastname: `Op${c}erator` })), 422, 'The lastname must not contain control characters.');
    }
  });

  it('a TAB is no control character to refuse, and leading or trailing line breaks are trimmed', async () => {
    const u = await created(api.post(USERS, { email: newEmail(), firstname: 'Ada\tByron', lastname: '\r\nLovelace\n' }), 'user');
    expect(u).toMatchObject({ firstname: 'Ada\tByron', lastname: 'Lovelace' });
  });

  it('one-line fields of other resources: names, option values and their translations, text custom field values', async () => {
    expectError(await api.post(ORGS, { name: 'Acme\nLtd' }), 422, 'The name must not contain control characters.');
    expectError(await api.post(BRANDS, { name: 'Brand\u0000' }), 422, 'The name must not contain control characters.');
    expectError(await api.post('/api/user/role', { name: 'Role\r\nX' }), 422, 'The name must not contain control characters.');
    expectError(await api.post('/api/user/role', { name: unique('Role'), 'name:fr': 'Rôle\nX' }), 422, 'The name:fr must not contain control characters.');
    expectError(await api.post('/api/user/customfield', { name: 'Field\nX', type: 8 }), 422, 'The name must not contain control characters.');
    expectError(await api.post('/api/user/customfield', { name: unique('F'), 'name:fr': 'Champ\u0000', type: 8 }), 422, 'The name:fr must not contain control characters.');
    expectError(await api.post('/api/user/customfield', { name: unique('F'), type: 7, options: [{ value: 'Red\nBlue' }] }), 422, 'The options.0.value must not contain control characters.');
    expectError(await api.post('/api/user/customfield', { name: unique('F'), type: 7, options: [{ value: 'Red', 'value:fr': 'Rouge\n' + 'Bleu' }] }), 422, 'The options.0.value:fr must not contain control characters.');
    expectError(await api.get(USERS, { search: 'a\u0000b' }), 422, 'The search must not contain control characters.');
  });

  it('a Text custom field refuses them, a Textarea keeps line breaks', async () => {
    const text = await created(api.post('/api/user/customfield', { name: unique('Text'), type: 8 }), 'custom field');
    const textarea = await created(api.post('/api/user/customfield', { name: unique('Textarea'), type: 9 }), 'custom field');
    expectError(await api.post(USERS, { email: newEmail(), customfield: { [text.id]: 'one\ntwo' } }), 422, `The customfield.${text.id} must not contain control characters.`);
    const u = await created(api.post(USERS, { email: newEmail(), customfield: { [textarea.id]: 'one\r\ntwo' } }), 'user');
    expect(u.customfields.find((v: any) => v.field_id === textarea.id).value).toBe('one\r\ntwo');
  });

  it('multi-line texts keep their line breaks: notes, descriptions, reasons', async () => {
    const notes = 'First line.\r\nSecond line.\n';
    expect((await created(api.post(ORGS, { name: unique('Notes'), notes }), 'organisation')).notes).toBe(notes);
    const field = await created(api.post('/api/user/customfield', {
      name: unique('F'), type: 8, description: 'Line one\nLine two', 'description:fr': 'Ligne un\nLigne deux',
    }), 'custom field');
    expect(field.description).toBe('Line one\nLine two');
    expect(field.translations).toEqual([expect.objectContaining({ locale: 'fr', description: 'Ligne un\nLigne deux' })]);
    const role = await created(api.post('/api/user/role', { name: unique('Role'), description: 'Does\nthings', 'description:fr': 'Fait\ndes choses' }), 'role');
    expect(role.description).toBe('Does\nthings');
    // A ban that applies to no event (it cannot get in the way of other tests).
    const ip = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`;
    const ban = await created(api.post('/api/core/ipban', { ip, type: 1, reason: 'Spam\nfrom here', event_user: 0, event_operator: 0, event_api: 0 }), 'ban');
    expect(ban.reason).toBe('Spam\nfrom here');
  });
});
