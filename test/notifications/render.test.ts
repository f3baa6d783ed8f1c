import { htmlToText } from '../../src/content/html';
import { escapeHtml, lookup, oneLine, renderTemplate, templateProblem } from '../../src/ticket/mail/render';
import { localesOf } from '../../src/ticket/mail/content';
import {
  mailDomain, newMessageId, normaliseMessageId, parseMessageId, parseReferences, subjectWithNumber,
} from '../../src/ticket/mail/threading';
import { DEFAULT_EMAIL_TEMPLATES } from '../../src/seed/emailTemplates';

const context = {
  ticket: { number: '1234567', subject: 'Printer <on fire> & "smoking"', frontend_url: 'https://help.test/tickets/view/1234567?token=ab&x=1', id: 12 },
  user: { firstname: 'Ann', formatted_name: 'Ann Example' },
  message: { text: 'Line one <b>bold</b>\nLine two' },
  brand: { name: 'Acme & Co' },
};

describe('the template renderer', () => {
  it('fills merge fields with and without spaces, numbers included', () => {
    expect(renderTemplate('#{{ ticket.number }} {{ticket.id}} {{user.firstname }}', context, 'text')).toBe('#1234567 12 Ann');
  });

  it('escapes every value in HTML and keeps it as it is in text', () => {
    expect(renderTemplate('<p>{{ ticket.subject }}</p>', context, 'html')).toBe('<p>Printer &lt;on fire&gt; &amp; &quot;smoking&quot;</p>');
    expect(renderTemplate('{{ ticket.subject }}', context, 'text')).toBe('Printer <on fire> & "smoking"');
    expect(renderTemplate('<a href="{{ ticket.frontend_url }}">x</a>', context, 'html'))
      .toBe('<a href="https://help.test/tickets/view/1234567?token=ab&amp;x=1">x</a>');
  });

  it('turns line breaks of a value into <br> in HTML only', () => {
    expect(renderTemplate('{{ message.text }}', context, 'html')).toBe('Line one &lt;b&gt;bold&lt;/b&gt;<br>\nLine two');
    expect(renderTemplate('{{ message.text }}', context, 'text')).toBe('Line one <b>bold</b>\nLine two');
  });

  it('renders unknown names, objects and anything that is not a path as empty', () => {
    const out = renderTemplate('[{{ nope }}][{{ user.lastname }}][{{ ticket }}][{{ ticket.number.length }}][{{ 1 + 1 }}][{{ }}]', context, 'html');
    expect(out).toBe('[][][][][][]');
  });

  it('never reaches prototypes, constructors or methods, and runs no code', () => {
    const probes = [
      '{{ constructor }}', '{{ ticket.constructor }}', '{{ ticket.constructor.name }}', '{{ __proto__ }}', '{{ ticket.__proto__ }}',
      '{{ toString }}', '{{ ticket.hasOwnProperty }}', '{{ brand.name.constructor.constructor }}', "{{ constructor.constructor('return process')() }}",
      '{{ ticket["number"] }}', '{{ process.env.PATH }}', '{{ this }}', '{{ global.process }}',
    ];
    for (const probe of probes) expect([probe, renderTemplate(probe, context, 'text')]).toEqual([probe, '']);
    expect(lookup(context, 'ticket.valueOf')).toBeNull();
    // A context that is not a plain object below the top level is not walked into.
    expect(lookup({ a: new Date(0) as unknown as string }, 'a')).toBeNull();
    expect(lookup({ a: { b: 'c' } }, 'a.b')).toBe('c');
  });

  it('ignores filters, raw included: values stay escaped', () => {
    expect(renderTemplate('{{ ticket.subject|raw }}', context, 'html')).toBe('Printer &lt;on fire&gt; &amp; &quot;smoking&quot;');
    expect(renderTemplate('{{ user.firstname | upper }}', context, 'html')).toBe('Ann');
  });

  it('templateProblem names what it would send as written, and passes every shipped template', () => {
    expect(templateProblem('{% if x %}a{% endif %}', 'contents')).toBe('The contents field uses a template tag ({% if %}) that is not supported: only {{ variables }} are.');
    expect(templateProblem('{{ ticket.subject', 'subject')).toBe("The subject field has a '{{' without its closing '}}'.");
    expect(templateProblem('{{ a {{ b }}', 'subject')).toBe("The subject field has a '{{' without its closing '}}'.");
    expect(templateProblem('{# note #}', 'contents')).toBe('The contents field uses a template comment ({# #}) that is not supported: only {{ variables }} are.');
    expect(templateProblem('{{- a|raw -}} }} {#main{x:1}', 'contents')).toBeNull();
    for (const [name, t] of Object.entries(DEFAULT_EMAIL_TEMPLATES)) {
      expect([name, templateProblem(t.subject, 'subject'), templateProblem(t.contents, 'contents')]).toEqual([name, null, null]);
    }
  });

  it('leaves text that is not a merge field alone', () => {
    expect(renderTemplate('{ ticket.number } {% if x %} }} {{', context, 'html')).toBe('{ ticket.number } {% if x %} }} {{');
  });

  it('reads an HTML template as text: paragraphs, breaks, links with their address, entities', () => {
    const html = '<p>Dear {{ user.formatted_name }},</p>\n<p>A&amp;B<br>next</p><p><a href="{{ feedback.url }}">Rate us</a></p><p><a href="{{ x }}">{{ x }}</a></p>';
    expect(htmlToText(html)).toBe('Dear {{ user.formatted_name }},\n\nA&B\nnext\nRate us ({{ feedback.url }})\n{{ x }}');
  });

  it('renders every shipped template without leaving a merge field behind', () => {
    for (const t of Object.values(DEFAULT_EMAIL_TEMPLATES)) {
      expect(renderTemplate(t.contents, context, 'html')).not.toMatch(/\{\{|\}\}/);
      expect(renderTemplate(htmlToText(t.contents), context, 'text')).not.toMatch(/\{\{|<p>/);
    }
  });

  it('keeps subjects on one line', () => {
    expect(oneLine('a\r\nb\tc  d')).toBe('a b c d');
    expect(escapeHtml(`<'&">`)).toBe('&lt;&#39;&amp;&quot;&gt;');
  });
});

describe('threading helpers', () => {
  it('make Message-IDs on the brand domain that name ticket and message, and read them back', () => {
    const id = newMessageId({ ticketId: 123, messageId: 456 }, 'support.example.com', 'abcdef0123456789');
    expect(id).toBe('t123.m456.rabcdef0123456789@support.example.com');
    expect(parseMessageId(id)).toEqual({ ticketId: 123, messageId: 456 });
    expect(parseMessageId(newMessageId({ ticketId: 9, messageId: null }, 'x.test'))).toEqual({ ticketId: 9, messageId: null });
    expect(parseMessageId('CAF=abc@mail.gmail.com')).toBeNull();
  });

  it('take the domain from system_url, else default_email, else APP_URL', () => {
    expect(mailDomain({ system_url: 'https://Help.Example.com/desk', default_email: 'a@b.test' })).toBe('help.example.com');
    expect(mailDomain({ system_url: null, default_email: 'support@acme.test' })).toBe('acme.test');
    expect(mailDomain({ system_url: 'not a url', default_email: null })).toBe('127.0.0.1');
  });

  it('normalise ids and read References headers', () => {
    expect(normaliseMessageId(' <a.b@c> ')).toBe('a.b@c');
    expect(normaliseMessageId('<>')).toBeNull();
    expect(normaliseMessageId('a b@c')).toBeNull();
    expect(parseReferences('<a@x> <b@y>\r\n <a@x>')).toEqual(['a@x', 'b@y']);
  });

  it('put the ticket number in the subject once', () => {
    expect(subjectWithNumber('[#42]: Help', '42')).toBe('[#42]: Help');
    expect(subjectWithNumber('Re: [#42]: Help', '42')).toBe('Re: [#42]: Help');
    expect(subjectWithNumber('Help', '42')).toBe('[#42] Help');
    expect(subjectWithNumber('[#4] Help', '42')).toBe('[#42] [#4] Help');
    expect(subjectWithNumber('', '42')).toBe('[#42]');
  });

  it('try the specific locale, then its language', () => {
    expect(localesOf('pt_BR')).toEqual(['pt_BR', 'pt']);
    expect(localesOf('fr')).toEqual(['fr']);
    expect(localesOf('default')).toEqual([]);
    expect(localesOf(null)).toEqual([]);
  });
});
