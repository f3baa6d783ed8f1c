import autocannon from 'autocannon';

/**
 * The load generator: a process of its own (run.ts starts it under `taskset -c 1` where there are
 * two cores), so it never shares an event loop or a core with the server it measures. Reads one
 * load as JSON in argv[2], prints the result as one JSON line on stdout.
 *
 * A POST body is a template: `__SEQ__` becomes a number unique to the request and `__IP__` an
 * address of 100.64.0.0/10 made from it; the number is also sent as `x-bench-seq`, which the
 * baseline server uses to make the same substitution in the statements it replays (the app
 * ignores the header).
 */
export interface Load {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /** First sequence number (distinct per run, so repeated runs create distinct records). */
  seq: number;
}

export interface LoadResult {
  rate: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  statuses: string;
  errors: number;
}

export const ipOf = (n: number) => `100.${64 + ((n >> 16) & 63)}.${(n >> 8) & 255}.${n & 255}`;
export const fill = (template: string, n: number) => template.replace(/__SEQ__/g, String(n)).replace(/__IP__/g, ipOf(n % 2 ** 22));

async function main() {
  const load = JSON.parse(process.argv[2]) as Load;
  let seq = load.seq;
  const result = await autocannon({
    url: load.url,
    connections: load.connections,
    duration: load.seconds,
    requests: [{
      method: load.method,
      headers: load.headers,
      ...(load.body !== undefined ? {
        setupRequest: (req: autocannon.Request) => {
          const n = seq++;
          return { ...req, headers: { ...req.headers, 'x-bench-seq': String(n) }, body: fill(load.body!, n) };
        },
      } : {}),
    }],
  });
  const out: LoadResult = {
    rate: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    statuses: Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => `${code} x${s.count ?? 0}`).join(', '),
    errors: result.errors + result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`loadgen: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
