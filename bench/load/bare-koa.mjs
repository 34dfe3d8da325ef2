// The baseline: a bare Koa JSON endpoint in its own process, answering every
// method and path with a fixed v1 envelope shaped like the agent API's answers
// (an intentId and a cursor, so the 200-agent generator runs against it unchanged).
import http from "node:http";
import Koa from "koa";

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
