/**
 * Stored HTML (src/content/html.ts): rich text is sanitised on write with an allow-list (no
 * script, no handlers, no javascript: links), plain text is stored exactly as sent, subjects stay
 * plain text (as sent).
 */
import { unique, useApi } from '../helpers/app';
import { expectList, expectSuccess } from '../helpers/envelope';
import { factories } from '../selfservice/support';
import { ticketContext, ticketFactories, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });
const t = ticketFactories(api, () => ctx);
const s = factories(api);

const HOSTILE = '<p onclick="steal()">Hi <b>there</b><script>alert(1)</script>'
  + '<a href="javascript:alert(2)">x</a><img src="https://cdn.example/a.png" onerror="alert(3)">'
  + '<iframe src="https://evil.example"></iframe><a href="https://ok.example/" target="_blank">ok</a></p>';
const CLEAN = '<p>Hi <b>there</b><a>x</a><img src="https://cdn.example/a.png" /><a href="https://ok.example/" target="_blank" rel="noopener noreferrer">ok</a></p>';
const PLAIN = 'if a < b && c > d then "quote" & \'apostrophe\' {{ user.firstname }}';

function expectSafe(html: string) {
  expect(html).not.toMatch(/<script|onerror|onclick|javascript:|<iframe/i);
}

describe('stored HTML', () => {
  it('ticket text and message text (create and update) are sanitised; plain text and subjects are kept', async () => {
    const subject = '<img src=x onerror=alert(1)> Broken';
    const ticket = await t.ticket({ text: HOSTILE, subject });
    expect(ticket.subject).toBe(subject);
    const first = expectList(await api.get('/api/ticket/message', { ticket_id: ticket.id }));
    expect(first[0].text).toBe(CLEAN);
    const reply = await t.message(ticket, { text: HOSTILE });
    expect(reply.text).toBe(CLEAN);
    expectSafe(reply.text);
    const plain = await t.message(ticket, { text: PLAIN });
    expect(plain.text).toBe(PLAIN);
    const edited = expectSuccess(await api.put(`/api/ticket/message/${plain.id}`, { text: '<svg onload="alert(1)"></svg>Edited' }), 'Successfully updated the message!');
    expect(edited.text).toBe('Edited');
  });

  it('plain text that only looks like markup (addresses and URLs in angle brackets, `<T>`, `a<b and c>d`) is kept whole, escaped', async () => {
    const ticket = await t.ticket({ text: 'Contact John <john@x.test> please' });
    expect(expectList(await api.get('/api/ticket/message', { ticket_id: ticket.id }))[0].text).toBe('<p>Contact John &lt;john@x.test&gt; please</p>');
    const reply = await t.message(ticket, { text: 'Visit <https://x.test/path> now,\nuse <T> generics.\n\nif a<b and c>d then' });
    expect(reply.text).toBe('<p>Visit &lt;https://x.test/path&gt; now,<br />\nuse &lt;T&gt; generics.</p>\n<p>if a&lt;b and c&gt;d then</p>');
    const alone = await t.message(ticket, { text: '<john@x.test>' });
    expect(alone.text).toBe('<p>&lt;john@x.test&gt;</p>');
    // In HTML, a `<` that opens no tag of HTML is text too; the tags are sanitised as ever.
    const edited = expectSuccess(await api.put(`/api/ticket/message/${reply.id}`, { text: '<p onclick="x()">Mail <b>me</b> at <me@x.test></p><script>alert(1)</script>' }), 'Successfully updated the message!');
    expect(edited.text).toBe('<p>Mail <b>me</b> at &lt;me@x.test&gt;</p>');
  });

  it('article text and its translations, canned responses and comments are sanitised', async () => {
    const article = await s.article({ text: HOSTILE, 'text:fr': HOSTILE });
    expect(article.text).toBe(CLEAN);
    const fr = expectSuccess(await api.get(`/api/selfservice/article/${article.id}`, { lang: 'fr' }));
    expect(fr.text).toBe(CLEAN);
    const updated = expectSuccess(await api.put(`/api/selfservice/article/${article.id}`, { text: PLAIN }), 'Successfully updated the article!');
    expect(updated.text).toBe(PLAIN);

    const canned = expectSuccess(await api.post('/api/ticket/cannedresponse', { name: unique('Canned'), text: HOSTILE, 'text:de': HOSTILE }), 'Successfully created new canned response!');
    expect(canned.text).toBe(CLEAN);
    expect(expectSuccess(await api.get(`/api/ticket/cannedresponse/${canned.id}`, { lang: 'de' })).text).toBe(CLEAN);

    const comment = expectSuccess(await api.post('/api/selfservice/comment', { article_id: article.id, name: 'Guest', text: HOSTILE }), 'Successfully created new comment!');
    expect(comment.text).toBe(CLEAN);
  });
});
