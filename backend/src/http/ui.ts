import { existsSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Context, Next } from "koa";
import { CohentError } from "@cohent/protocol";

type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: () => void) => void;

/**
 * Serves the SvelteKit Control Room (adapter-node's handler) from the same
 * process and port as the API: everything that is not /api or /healthz.
 */
export function consoleUi(buildDir: string) {
  let handler: Promise<NodeHandler | null> | null = null;
  const load = () =>
    (handler ??= (async () => {
      const file = path.join(buildDir, "handler.js");
      if (!existsSync(file)) return null;
      return ((await import(pathToFileURL(file).href)) as { handler: NodeHandler }).handler;
    })());

  return async (ctx: Context, next: Next) => {
    if (ctx.path.startsWith("/api/") || ctx.path === "/api" || ctx.path === "/healthz") return next();
    // Pages are read, never written: another method is told so (the error envelope answers 405, or OPTIONS 200).
    if (!["GET", "HEAD"].includes(ctx.method)) {
      ctx.set("Allow", "GET, HEAD");
      ctx.status = ctx.method === "OPTIONS" ? 200 : 405;
      return;
    }
    const h = await load();
    // Not built here: a 404 with a stable code, not a 5xx (the API itself is up).
    if (!h)
      throw new CohentError(
        "NOT_FOUND",
        "The Control Room is not built on this server. Run: npm run build -w console",
      );
    ctx.status = 200; // SvelteKit sets the real status; this keeps the envelope middleware out of it.
    ctx.respond = false;
    await new Promise<void>((resolve) => {
      ctx.res.once("close", resolve);
      ctx.res.once("finish", resolve);
      h(ctx.req, ctx.res, () => {
        ctx.res.statusCode = 404;
        ctx.res.end("Not found");
      });
    });
  };
}

/**
 * Loads the Control Room's bundle and renders its sign-in page and its
 * home through the server itself, before anyone waits on them. The first
 * load holds the event loop for 50-80 ms in one turn (module evaluation,
 * the route nodes, the first render); a /healthz behind it took 135 ms
 * under load. Once loaded, the error page costs ~3 ms cold (and SvelteKit
 * would log a warm-up's 404). A failure or a silence is ignored: the page
 * then loads on first use.
 */
export async function warmConsole(host: string, port: number): Promise<void> {
  const to = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  for (const path of ["/signin", "/"])
    await new Promise<void>((done) => {
      const req = http.get({ host: to, port, path, timeout: 5_000, agent: false }, (res) => {
        res.resume();
        res.on("end", done);
        res.on("error", () => done());
      });
      req.on("timeout", () => req.destroy());
      req.on("error", () => done());
    });
}
