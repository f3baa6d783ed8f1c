import { Brand } from '../../src/db/models';
import { MailConfigError, closeTransports, transportFor } from '../../src/mail/transports';
import { frame, frameRendered } from '../../src/mail/compose';
import { sequelize } from '../../src/db/sequelize';

sequelize(); // registers the models (Brand.build); no query is made
afterAll(() => sequelize().close());

const brand = (over: Partial<Brand> = {}) => Brand.build({
  id: 900, name: 'B', email_method: 'smtp', smtp_host: '127.0.0.1', smtp_port: 2525, smtp_encryption: null,
  smtp_requires_auth: 0, smtp_username: null, smtp_password: null, ...over,
} as any);

afterAll(() => closeTransports());

describe('per-brand transports', () => {
  it('reuses the transport while the settings are the same, and rebuilds it when they change', () => {
    const a = transportFor(brand());
    expect(transportFor(brand())).toBe(a);
    const b = transportFor(brand({ smtp_port: 2526 }));
    expect(b).not.toBe(a);
    expect(transportFor(brand({ smtp_port: 2526, smtp_password: 'x', smtp_requires_auth: 1 }))).not.toBe(b);
    expect(transportFor(brand({ id: 901 } as any))).not.toBe(transportFor(brand({ smtp_port: 2526, smtp_password: 'x', smtp_requires_auth: 1 })));
  });

  it('maps the brand encryption setting onto the transport', () => {
    const opts = (b: Brand) => (transportFor(b) as any).options;
    expect(opts(brand({ id: 910, smtp_encryption: 'ssl', smtp_port: null } as any))).toMatchObject({ secure: true, port: 465 });
    expect(opts(brand({ id: 911, smtp_encryption: 'tls' } as any))).toMatchObject({ secure: false, requireTLS: true, ignoreTLS: false });
    expect(opts(brand({ id: 913, smtp_encryption: null } as any))).toMatchObject({ secure: false, requireTLS: false, ignoreTLS: true });
    expect(opts(brand({ id: 912, smtp_requires_auth: 1, smtp_username: 'u', smtp_password: 'p' } as any)).auth).toEqual({ user: 'u', pass: 'p' });
  });

  it('refuses a brand without an SMTP host', () => {
    expect(() => transportFor(brand({ id: 920, smtp_host: null } as any))).toThrow(MailConfigError);
  });

  it('frames a body with the brand header and footer, escaping the body in HTML', () => {
    const { html, text } = frame(brand({ global_email_header: '<b>Head</b>', global_email_footer: '<i>Foot</i>' } as any), {
      paragraphs: ['Hi <there> & welcome'], link: { label: 'Go', url: 'http://x.test/?a=1&b=2' },
    });
    expect(html).toBe('<b>Head</b>\n<p>Hi &lt;there&gt; &amp; welcome</p>\n<p><a href="http://x.test/?a=1&amp;b=2">Go</a></p>\n<i>Foot</i>');
    expect(text).toBe('Head\n\nHi <there> & welcome\n\nGo: http://x.test/?a=1&b=2\n\nFoot');
  });

  it('sanitises a header and footer stored before they were sanitised on write', () => {
    const stored = brand({ global_email_header: '<p onclick="x()">Head</p><script>alert(1)</script>', global_email_footer: '<a href="javascript:x()">Foot</a>' } as any);
    expect(frame(stored, { paragraphs: ['Hi'] }).html).toBe('<p>Head</p>\n<p>Hi</p>\n<a>Foot</a>');
    expect(frameRendered(stored, { html: '<p>Body</p>', text: 'Body' }).html).toBe('<p>Head</p>\n<p>Body</p>\n<a>Foot</a>');
  });
});
