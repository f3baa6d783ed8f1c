import request from 'supertest';
import { useApi } from '../helpers/app';

const api = useApi();

// On the server the web process listens with (src/http/nodeServer.ts): the dashboard is an Express
// app of its own, mounted in ours, which sets its own prototypes on the request while it serves it.

describe('the queue dashboard', () => {
  it('asks for the API token', async () => {
    const res = await request(api.server).get('/admin/queues');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic/);
    expect(res.body).toMatchObject({ status: 'error', data: null });
    expect((await request(api.server).get('/admin/queues/api/queues').auth('wrong-token', 'x')).status).toBe(401);
  });

  it('shows every queue of the project to a token holder', async () => {
    const page = await request(api.server).get('/admin/queues').auth(api.token, 'x');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/html/);
    const res = await request(api.server).get('/admin/queues/api/queues').auth(api.token, 'x');
    expect(res.status).toBe(200);
    expect(res.body.queues.map((q: { name: string }) => q.name).sort()).toEqual(['mail', 'mailbox', 'scheduler', 'webhooks']);
  });

  it('sends frame protection and a same-origin policy, on the page and on its 401', async () => {
    for (const res of [await request(api.server).get('/admin/queues').auth(api.token, 'x'), await request(api.server).get('/admin/queues')]) {
      expect(res.headers['x-frame-options']).toBe('DENY');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/https?:|\*|'unsafe-eval'/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('serves a page that loads nothing from another origin, and every script and stylesheet it names', async () => {
    const page = await request(api.server).get('/admin/queues').auth(api.token, 'x');
    const html = page.text;
    expect(html).not.toMatch(/\b(?:src|href)="(?:https?:)?\/\//i);
    expect(html).not.toContain('fonts.googleapis.com');
    // Under script-src 'self' an inline script would not run: each one has a src, but for the
    // JSON data block, which is never executed.
    const inline = [...html.matchAll(/<script\b([^>]*)>/gi)].map((m) => m[1]).filter((attrs) => !/\bsrc=/.test(attrs));
    expect(inline.every((attrs) => /type="application\/json"/.test(attrs))).toBe(true);
    const base = /<base href="([^"]+)"/.exec(html)?.[1];
    expect(base).toBe('/admin/queues/');
    const scripts = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/gi)].map((m) => m[1]);
    const styles = [...html.matchAll(/<link\b[^>]*\brel="stylesheet"[^>]*\bhref="([^"]+)"|<link\b[^>]*\bhref="([^"]+)"[^>]*\brel="stylesheet"/gi)].map((m) => m[1] ?? m[2]);
    expect(scripts.length).toBeGreaterThan(0);
    expect(styles.length).toBeGreaterThan(0);
    for (const [url, type] of [...scripts.map((u) => [u, /javascript/]), ...styles.map((u) => [u, /text\/css/])] as Array<[string, RegExp]>) {
      const asset = await request(api.server).get(new URL(url, `http://x${base}`).pathname).auth(api.token, 'x');
      expect({ url, status: asset.status, type: asset.headers['content-type'], poweredBy: asset.headers['x-powered-by'] })
        .toEqual({ url, status: 200, type: expect.stringMatching(type), poweredBy: undefined });
      expect(asset.headers['x-frame-options']).toBe('DENY');
    }
  });

  it('never announces X-Powered-By, on the page, its API or its static files', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues', '/admin/queues/static/images/logo.svg', '/admin/queues/queue/mail', '/admin/queues/api/nothing']) {
      const res = await request(api.server).get(path).auth(api.token, 'x');
      expect({ path, poweredBy: res.headers['x-powered-by'] }).toEqual({ path, poweredBy: undefined });
    }
  });
});
