import { allRoutes } from './routes';

/** Paths outside the route records, as metrics label them. */
const EXACT = new Set(['/healthz', '/readyz', '/health', '/metrics', '/api/openapi.json', '/docs']);
const PREFIXES: Array<[string, string]> = [['/docs/', '/docs/*'], ['/admin/queues', '/admin/queues/*'], ['/account/verify/', '/account/verify/:token']];

interface Pattern { path: string; parts: string[] }
let compiled: { size: number; bySegments: Map<string, Pattern[]>; anyArea: Pattern[] } | undefined;

/** The patterns a path of these segments can match: same number of segments and same area (`/api/<area>/`). */
const keyOf = (parts: string[]) => `${parts.length} ${parts[2]}`;

/**
 * The route records' paths, fewest parameters first (`/article/search` wins over `/article/:id`),
 * grouped by keyOf: a path is compared with its group only, not with every route (then with any
 * whose area is a parameter, which no route has today).
 */
function patterns(parts: string[]): Pattern[] {
  const routes = allRoutes();
  if (!compiled || compiled.size !== routes.length) {
    const paths = [...new Set(routes.map((r) => r.path))];
    const params = (p: string) => p.split('/').filter((s) => s.startsWith(':')).length;
    const bySegments = new Map<string, Pattern[]>();
    const anyArea: Pattern[] = [];
    for (const path of paths.sort((a, b) => params(a) - params(b))) {
      const pattern = { path, parts: path.split('/') };
      if (pattern.parts[2]?.startsWith(':')) anyArea.push(pattern);
      else bySegments.set(keyOf(pattern.parts), [...(bySegments.get(keyOf(pattern.parts)) ?? []), pattern]);
    }
    compiled = { size: routes.length, bySegments, anyArea };
  }
  const group = compiled.bySegments.get(keyOf(parts)) ?? [];
  return compiled.anyArea.length ? [...group, ...compiled.anyArea] : group;
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
  for (const p of patterns(parts)) {
    if (p.parts.length === parts.length && p.parts.every((s, i) => s.startsWith(':') ? parts[i] !== '' : s === parts[i])) return p.path;
  }
  return 'unmatched';
}
