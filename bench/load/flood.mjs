// The flood of `bench/load/flood.ts`, in its own process as an attacker's would be: one token's
// kill-switch reads (GET /api/agent/session) on 16 keep-alive connections as fast as they go, for `ms`.
// Prints the answers by status and error code as JSON on stdout.
import http from "node:http";

const { url, token, ms } = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const end = Date.now() + ms;
const counts = {};
const once = () =>
  new Promise((resolve) => {
    const req = http.get(
      `${url}/api/agent/session`,
      { agent, headers: { authorization: `Bearer ${token}`, "x-cohent-session": "flood" } },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => {
          let code = "?";
          try {
            const j = JSON.parse(body);
            code = j.ok ? "ok" : j.error.code;
          } catch {
            // not JSON: counted as "?"
          }
          const key = `${res.statusCode} ${code}`;
          counts[key] = (counts[key] ?? 0) + 1;
          resolve();
        });
      },
    );
    req.on("error", () => {
      counts.error = (counts.error ?? 0) + 1;
      resolve();
    });
  });
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (Date.now() < end) await once();
  }),
);
agent.destroy();
process.stdout.write(JSON.stringify({ counts }) + "\n");
