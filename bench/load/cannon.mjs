// The external load generator: one autocannon run in this process, driven by a
// JSON spec in argv[2]; prints a compact JSON result on stdout.
// Spec: { url, method, headers, body, connections, duration }
import autocannon from "autocannon";

const spec = JSON.parse(process.argv[2]);
const result = await autocannon({
  url: spec.url,
  method: spec.method ?? "GET",
  headers: spec.headers ?? {},
  ...(spec.body !== undefined ? { body: spec.body } : {}),
  connections: spec.connections ?? 8,
  duration: spec.duration ?? 5,
});
const seconds = result.duration || spec.duration;
process.stdout.write(
  JSON.stringify({
    total: result.requests.total,
    seconds,
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }) + "\n",
);
