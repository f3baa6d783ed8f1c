import request from 'supertest';
import { Brand, Department, EmailTemplate, FeedbackForm, Translation } from '../../src/db/models';
import { emailTemplates, EMAIL_TEMPLATE_KEYS } from '../../src/ticket/department';
import { useApi, unique } from '../helpers/app';
import { expectError, expectList, expectNotFound, expectSuccess } from '../helpers/envelope';

const api = useApi();
const BASE = '/api/core/emailtemplate';
const TEMPLATE_KEYS = ['id', 'brand_id', 'name', 'description', 'subject', 'contents', 'created_at', 'updated_at', 'translations'];
const NAMES = [...EMAIL_TEMPLATE_KEYS, 'user_feedback_request', 'user_ticket_locked', 'user_email_verification'];

const keysOf = (o: object) => Object.keys(o).sort();

let brand: Brand;
let otherBrand: Brand;
let brandOwn: EmailTemplate;
let otherOwn: EmailTemplate;
beforeAll(async () => {
  brand = await Brand.create({ name: unique('Brand') });
  otherBrand = await Brand.create({ name: unique('Other brand') });
  brandOwn = await EmailTemplate.create({ brand_id: brand.id, name: 'user_ticket_opened', subject: 'Brand subject', contents: '<p>Brand</p>' });
  otherOwn = await EmailTemplate.create({ brand_id: otherBrand.id, name: 'user_ticket_opened', subject: 'Other subject', contents: '<p>Other</p>' });
});

describe('the seeded templates', () => {
  it('one per department key, the feedback request, the locked notice and the verification mail, for every brand, with merge fields', async () => {
    const data = expectList(await api.get(BASE, { limit: 1000 })).filter((t) => t.brand_id === null);
    expect(data.map((t) => t.name).sort()).toEqual([...NAMES].sort());
    for (const t of data) {
      expect(keysOf(t)).toEqual([...TEMPLATE_KEYS].sort());
      expect(t.description).toEqual(expect.any(String));
      // The verification mail is about a person, not a ticket.
      if (t.name === 'user_email_verification') continue;
      expect(t.subject).toContain('{{ ticket.number }}');
      expect(t.contents).toMatch(/\{\{ (ticket|message)\.[a-z_]+ \}\}/);
    }
    const verification = data.find((t) => t.name === 'user_email_verification');
    for (const field of ['{{ user.formatted_name }}', '{{ verification.url }}', '{{ verification.hours }}', '{{ brand.name }}']) {
      expect(verification.subject + verification.contents).toContain(field);
    }
    const opened = data.find((t) => t.name === 'user_ticket_opened');
    for (const field of ['{{ ticket.subject }}', '{{ message.text }}', '{{ ticket.frontend_url }}', '{{ brand.name }}']) {
      expect(opened.contents).toContain(field);
    }
  });

  it('are mapped in the first department and named by the feedback form', async () => {
    const templates = await EmailTemplate.findAll({ where: { brand_id: null } });
    const id = (name: string) => templates.find((t) => t.name === name)!.id;
    const first = (await Department.findOne({ order: [['id', 'ASC']] }))!;
    expect(emailTemplates(first.email_templates)).toEqual(Object.fromEntries(EMAIL_TEMPLATE_KEYS.map((k) => [k, id(k)])));
    const form = (await FeedbackForm.findOne({ order: [['id', 'ASC']] }))!;
    expect(form.email_template_id).toBe(id('user_feedback_request'));
  });
});

describe('GET /api/core/emailtemplate', () => {
  it('name: the templates of that name', async () => {
    const data = expectList(await api.get(BASE, { name: 'user_ticket_opened', limit: 1000 }));
    expect(data.every((t) => t.name === 'user_ticket_opened')).toBe(true);
    expect(data.map((t) => t.brand_id)).toEqual(expect.arrayContaining([null, brand.id, otherBrand.id]));
  });

  it('brand_id: the templates of the brand and those of every brand', async () => {
    const res = await api.get(BASE, { brand_id: brand.id, limit: 1000 });
    const data = expectList(res);
    expect(data.map((t) => t.id)).toContain(brandOwn.id);
    expect(data.map((t) => t.id)).not.toContain(otherOwn.id);
    expect(data.filter((t) => t.brand_id === null)).toHaveLength(NAMES.length);
    expect(res.body.count).toBe(NAMES.length + 1);
    const both = expectList(await api.get(BASE, { brand_id: brand.id, name: 'user_ticket_opened' }));
    expect(both.map((t) => t.brand_id).sort()).toEqual([brand.id, null].sort());
  });

  it('422 for bad filters', async () => {
    expectError(await api.get(BASE, { brand_id: 'x' }), 422, 'The brand id must be an integer.');
    expectError(await api.get(BASE, { name: 'x'.repeat(65) }), 422, 'The name may not be greater than 64 characters.');
  });
});

describe('GET /api/core/emailtemplate/{id}', () => {
  it('shows a template; 404 for an unknown one', async () => {
    const data = expectSuccess(await api.get(`${BASE}/${brandOwn.id}`));
    expect(data).toEqual({
      id: brandOwn.id, brand_id: brand.id, name: 'user_ticket_opened', description: null, subject: 'Brand subject', contents: '<p>Brand</p>',
      created_at: brandOwn.created_at, updated_at: brandOwn.updated_at, translations: [],
    });
    expectNotFound(await api.get(`${BASE}/999999`), 'email template');
  });
});

describe('PUT /api/core/emailtemplate/{id}', () => {
  it('edits the subject and contents, merge fields kept as written', async () => {
    const template = await EmailTemplate.create({ name: 'operator_ticket_note', brand_id: brand.id, subject: 's', contents: 'c' });
    const contents = '<p>Hi {{ operator.formatted_name }},</p>\n<p>{{ message.text|raw }}</p>\n';
    const data = expectSuccess(await api.put(`${BASE}/${template.id}`, { subject: '[#{{ ticket.number }}] Note', contents }), 'Successfully updated the email template!');
    expect(data).toMatchObject({ subject: '[#{{ ticket.number }}] Note', contents, name: 'operator_ticket_note' });
    expect(expectSuccess(await api.putJson(`${BASE}/${template.id}`, { subject: 'Only subject' }), 'Successfully updated the email template!'))
      .toMatchObject({ subject: 'Only subject', contents });
  });

  it('takes translations per language and replaces them on the next update that has any', async () => {
    const template = await EmailTemplate.create({ name: 'user_ticket_reply', brand_id: brand.id, subject: 'Reply', contents: 'Body' });
    const data = expectSuccess(await api.put(`${BASE}/${template.id}`, {
      'subject:fr': 'Réponse', 'contents:fr': '<p>Corps</p>', 'subject:de': 'Antwort',
    }), 'Successfully updated the email template!');
    expect(data.translations).toEqual([
      { template_id: template.id, subject: 'Antwort', contents: null, locale: 'de' },
      { template_id: template.id, subject: 'Réponse', contents: '<p>Corps</p>', locale: 'fr' },
    ]);
    expect(expectSuccess(await api.get(`${BASE}/${template.id}`, { lang: 'fr' }))).toMatchObject({ subject: 'Réponse', contents: '<p>Corps</p>' });
    const replaced = expectSuccess(await api.put(`${BASE}/${template.id}`, { 'contents:es': 'Cuerpo' }), 'Successfully updated the email template!');
    expect(replaced.translations).toEqual([{ template_id: template.id, subject: null, contents: 'Cuerpo', locale: 'es' }]);
    expect(await Translation.count({ where: { record_type: 'email_template', record_id: template.id } })).toBe(1);
  });

  it('404 and 422', async () => {
    expectNotFound(await api.put(`${BASE}/999999`, { subject: 'x' }), 'email template');
    expectError(await api.put(`${BASE}/${brandOwn.id}`, { subject: '' }), 422, 'The subject field is required.');
    expectError(await api.put(`${BASE}/${brandOwn.id}`, { contents: '  ' }), 422, 'The contents field is required.');
    expectError(await api.put(`${BASE}/${brandOwn.id}`, { subject: 'x'.repeat(256) }), 422, 'The subject may not be greater than 255 characters.');
    expectError(await api.put(`${BASE}/${brandOwn.id}`, { 'name:fr': 'x' }), 422, 'The name:fr field is not translatable.');
  });

  it('refuses what the renderer would mail as written (Twig tags and comments, a {{ without its }}), changing nothing', async () => {
    const template = await EmailTemplate.create({ name: 'user_ticket_opened', brand_id: brand.id, subject: 'Kept', contents: '<p>Kept</p>' });
    await Translation.create({ record_type: 'email_template', record_id: template.id, locale: 'fr', field: 'subject', value: 'Gardé' });
    const refusals: Array<[Record<string, string>, string]> = [
      [{ contents: '<p>{% if user.firstname %}Hi {{ user.firstname }}{% endif %}</p>' },
        'The contents field uses a template tag ({% if %}) that is not supported: only {{ variables }} are.'],
      [{ contents: '{%- for m in messages -%}{{ m.text }}{% endfor %}' }, 'The contents field uses a template tag ({% for %}) that is not supported: only {{ variables }} are.'],
      [{ contents: 'Hi {% %}' }, 'The contents field uses a template tag ({% %}) that is not supported: only {{ variables }} are.'],
      [{ contents: '<p>{# internal note #}Hi</p>' }, 'The contents field uses a template comment ({# #}) that is not supported: only {{ variables }} are.'],
      [{ subject: '{{ ticket.subject' }, "The subject field has a '{{' without its closing '}}'."],
      // FIELD takes the first }}: the first {{ would swallow the text up to the second field's end.
      [{ subject: 'Re: {{ ticket.number and {{ ticket.subject }}' }, "The subject field has a '{{' without its closing '}}'."],
      [{ subject: 'Fine {{ ticket.number }}', contents: '<p>{{ user.firstname }</p>' }, "The contents field has a '{{' without its closing '}}'."],
      [{ 'subject:de': '{% if x %}Antwort{% endif %}' }, 'The subject:de field uses a template tag ({% if %}) that is not supported: only {{ variables }} are.'],
      [{ 'contents:fr': '<p>Bonjour {{ user.firstname</p>' }, "The contents:fr field has a '{{' without its closing '}}'."],
    ];
    for (const [body, message] of refusals) expectError(await api.put(`${BASE}/${template.id}`, body), 422, message);
    await template.reload();
    expect([template.subject, template.contents, template.updated_at]).toEqual(['Kept', '<p>Kept</p>', template.created_at]);
    expect((await Translation.findAll({ where: { record_type: 'email_template', record_id: template.id } })).map((t) => [t.field, t.value])).toEqual([['subject', 'Gardé']]);

    // Merge fields as the renderer fills them pass: filters (ignored), whitespace control, spacing,
    // a lone }} (minified CSS), a # or % outside a tag.
    const contents = '<style>@media(max-width:600px){#main{width:100%}}</style><p>{{- user.firstname|title -}}, 100% {{message.text|raw}} #1</p>';
    expect(expectSuccess(await api.put(`${BASE}/${template.id}`, { subject: '[#{{ ticket.number }}] {{ticket.subject}}', contents, 'contents:fr': contents }), 'Successfully updated the email template!'))
      .toMatchObject({ subject: '[#{{ ticket.number }}] {{ticket.subject}}', contents });
  });

  it('every shipped template passes the check: each saved back as it is', async () => {
    const shipped = await EmailTemplate.findAll({ where: { brand_id: null } });
    expect(shipped.map((t) => t.name).sort()).toEqual([...NAMES].sort());
    for (const t of shipped) {
      expect([t.name, expectSuccess(await api.put(`${BASE}/${t.id}`, { subject: t.subject, contents: t.contents, 'subject:fr': t.subject, 'contents:fr': t.contents }), 'Successfully updated the email template!')])
        .toEqual([t.name, expect.objectContaining({ subject: t.subject, contents: t.contents })]);
      await Translation.destroy({ where: { record_type: 'email_template', record_id: t.id } });
    }
  });

  it('templates are not created or deleted through the API', async () => {
    expect((await request(api.app).post(BASE).auth(api.token, 'x')).status).toBe(405);
    const res = await request(api.app).delete(`${BASE}/${brandOwn.id}`).auth(api.token, 'x');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, PUT');
  });
});
