import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';

/** What a measurement reports: rate (requests or operations per second) and latency in ms. */
export interface Stats {
  rate: number;
  p50: number;
  p99: number;
  total: number;
  /** Responses outside 2xx (HTTP only). */
  non2xx: number;
  /** Responses by status code, e.g. `200 x1234, 403 x5` (HTTP only). */
  statuses?: string;
  /** Connection errors and timeouts (HTTP), or failed operations (baseline). */
  errors: number;
  /** The first failure of the baseline, to report. */
  firstError?: string;
}

export interface HttpLoad {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** A fresh body for each request (POST). */
  body?: () => string;
  connections: number;
  seconds: number;
}

/** One autocannon run against the app (programmatic API: nothing is printed). */
export async function runHttp(load: HttpLoad): Promise<Stats> {
  const { url, method, headers, body, connections, seconds } = load;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [{
      method,
      headers,
      // A new body per request, so that each POST creates a different record.
      ...(body ? { setupRequest: (req: autocannon.Request) => ({ ...req, body: body() }) } : {}),
    }],
  });
  return {
    rate: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    statuses: Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => `${code} x${s.count ?? 0}`).join(', '),
    errors: result.errors + result.timeouts,
  };
}

/** The value at quantile q of sorted samples (nearest rank). */
function quantile(sorted: Float64Array, q: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * `op` run by `concurrency` loops for `seconds`, each starting its next operation as soon as the
 * previous one ends: the closed-loop model of autocannon's connections, without HTTP.
 */
export async function runLoops(op: () => Promise<void>, concurrency: number, seconds: number): Promise<Stats> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const begin = performance.now();
  const deadline = begin + seconds * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await op();
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = (performance.now() - begin) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  return { rate: latencies.length / elapsed, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), total: latencies.length, non2xx: 0, errors, firstError };
}
