import { allRoutes } from './routes';

/** Paths outside the route records, as metrics label them. */
const EXACT = new Set(['/healthz', '/readyz', '/health', '/metrics', '/api/openapi.json', '/docs']);
const PREFIXES: Array<[string, string]> = [['/docs/', '/docs/*'], ['/admin/queues', '/admin/queues/*'], ['/account/verify/', '/account/verify/:token']];

let compiled: { size: number; patterns: Array<{ path: string; parts: string[] }> } | undefined;

/** The route records' paths, fewest parameters first: `/article/search` wins over `/article/:id`. */
function patterns() {
  const routes = allRoutes();
  if (!compiled || compiled.size !== routes.length) {
    const paths = [...new Set(routes.map((r) => r.path))];
    const params = (p: string) => p.split('/').filter((s) => s.startsWith(':')).length;
    compiled = { size: routes.length, patterns: paths.sort((a, b) => params(a) - params(b)).map((path) => ({ path, parts: path.split('/') })) };
  }
  return compiled.patterns;
}

/**
 * The route pattern a path matches (`/api/user/user/:id`), whatever the method (a 405 is labelled
 * with its route too); `unmatched` for anything else, so that a label never holds a raw id or
 * whatever a client put in a URL.
 */
export function routePattern(path: string): string {
  const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (EXACT.has(clean)) return clean;
  for (const [prefix, label] of PREFIXES) if (clean.startsWith(prefix)) return label;
  if (!clean.startsWith('/api/')) return 'unmatched';
  const parts = clean.split('/');
  for (const p of patterns()) {
    if (p.parts.length === parts.length && p.parts.every((s, i) => s.startsWith(':') ? parts[i] !== '' : s === parts[i])) return p.path;
  }
  return 'unmatched';
}
