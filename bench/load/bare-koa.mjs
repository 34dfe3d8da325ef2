// The baseline: a bare Koa JSON endpoint in its own process, answering every
// method and path with a fixed v1 envelope shaped like the agent API's answers
// (an intentId and a cursor, so the 200-agent generator runs against it unchanged).
//
// Beside it, GET /floor/session: the floor of a kill-switch read (requests.ts's "kill-switch floor" row),
// what any authenticated read of a session pays whatever the store: the bearer token's SHA-256, a
// session found by it in memory, the envelope with its two fresh times, and the access log line, logged
// as the server logs it (pino, batched, on stderr: backend/src/log.ts). The real read's ratio to this
// row's is what Cohent's own code costs beyond that.
import { createHash } from "node:crypto";
import http from "node:http";
import Koa from "koa";
import pino from "pino";

const log = pino(
  { base: { service: "bare" } },
  pino.destination({ dest: 2, sync: true, minLength: 4096, periodicFlush: 100 }),
);
const sessions = new Map();
const LEASE_MS = 600_000;
async function floorSession(ctx) {
  const start = performance.now();
  const secret = /^Bearer\s+(\S+)$/i.exec(ctx.get("authorization"))?.[1];
  const key = ctx.get("x-cohent-session");
  if (!secret || !key) {
    ctx.status = 401;
    ctx.body = { version: 1, ok: false, operation: "session", error: { code: "UNAUTHENTICATED" } };
  } else {
    const hash = createHash("sha256").update(secret).digest("hex");
    let session = sessions.get(`${hash} ${key}`);
    if (!session)
      sessions.set(`${hash} ${key}`, (session = { id: `ses_${key}`, control: "active", epoch: 0 }));
    session.seenAt = Date.now();
    ctx.body = {
      version: 1,
      ok: true,
      operation: "session",
      data: { control: session.control, controlReason: null, notices: 0 },
      warnings: [],
      meta: {
        serverTime: new Date().toISOString(),
        serverVersion: "0.1.0",
        minAdapterVersion: "0.1.0",
        session: {
          id: session.id,
          control: session.control,
          controlReason: null,
          leaseExpiresAt: new Date(session.seenAt + LEASE_MS).toISOString(),
          epoch: session.epoch,
        },
      },
    };
  }
  log.info(
    {
      method: ctx.method,
      path: ctx.path,
      status: ctx.status,
      operation: "session",
      ms: Math.round(performance.now() - start),
    },
    "request",
  );
}

const app = new Koa();
const body = {
  version: 1,
  ok: true,
  operation: "bare",
  data: { intentId: "wki_bare", cursor: "1", control: "active", controlReason: null, packet: null },
  warnings: [],
  meta: {
    serverTime: "",
    session: { id: "bare", control: "active", controlReason: null, leaseExpiresAt: "" },
  },
};
app.use(async (ctx) => {
  if (ctx.path === "/floor/session") return floorSession(ctx);
  // Read the request body, as the real server does.
  for await (const _ of ctx.req);
  // A long-poll (x-cohent-wait: seconds) is held that long, as the real server holds one while nothing
  // concerns it: answered at once, the 200 agents' long-polls would spin thousands of requests a second.
  const wait = Number(ctx.get("x-cohent-wait")) * 1000;
  if (wait > 0) {
    const res = ctx.res;
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, wait);
      res.once("close", () => (clearTimeout(timer), resolve()));
    });
  }
  ctx.body = body;
});
const server = http.createServer(app.callback());
server.listen(0, "127.0.0.1", () =>
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`),
);
process.once("SIGTERM", () => server.close(() => process.exit(0)));
process.once("SIGINT", () => server.close(() => process.exit(0)));
