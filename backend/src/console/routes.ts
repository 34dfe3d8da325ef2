import { randomBytes, timingSafeEqual } from "node:crypto";
import Router from "@koa/router";
import type { Context, Next } from "koa";
import { CohentError, success } from "@cohent/protocol";
import { z } from "zod";
import { parseSinceText } from "./since.js";
import type { ConsoleConfig } from "./config.js";
import { githubCanPush, githubLogin, githubOAuth } from "./github.js";
import { LiveFeed } from "./live.js";
import * as admin from "../operations/admin.js";
import {
  createConsoleSession, endConsoleSession, findConsoleSession, listRepositories, metricsSeries, redeemLoginLink, repoOverview, type ConsoleIdentity,
} from "../operations/console.js";
import type { Deps } from "../operations/deps.js";
import { decidePairing, pairingByCode, pendingPairings, pollPairing, startPairing } from "../operations/pairing.js";
import { recap, renderRecap } from "../operations/recap.js";

export const SESSION_COOKIE = "cohent_console";
const STATE_COOKIE = "cohent_oauth_state";
export const CSRF_HEADER = "x-cohent-csrf";

/** Only same-site relative paths: a sign-in never redirects elsewhere. */
function safeNext(next: unknown): string {
  return typeof next === "string" && /^\/(?![/\\])/.test(next) ? next : "/";
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The human side over HTTP: pairing (no auth; the device code is the
 * secret), sign-in, and the Control Room's JSON and SSE API. Console routes
 * take only a console session cookie; agent tokens are not looked at here,
 * just as /api/agent never looks at cookies.
 */
export function consoleRoutes(deps: Deps, config: ConsoleConfig): Router {
  const router = new Router();
  const live = new LiveFeed(deps);
  const mode = config.github ? "github" : "local";
  const pushCache = new Map<string, { ok: boolean; at: number }>();
  // Koa 3's ctx.origin is the Origin request header, not this server's origin.
  const selfOrigin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;
  const baseUrl = (ctx: Context) => config.publicUrl ?? selfOrigin(ctx);
  const reply = (ctx: Context, operation: string, data: unknown) => {
    ctx.body = success(operation, data, { serverTime: deps.clock().toISOString() });
  };
  const op = (name: string) => async (ctx: Context, next: Next) => {
    ctx.state.operation = name;
    await next();
  };

  // ---- pairing: the CLI side --------------------------------------------
  router.post("/api/pairing", op("pairing.start"), async (ctx) => {
    if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
    reply(ctx, "pairing.start", await startPairing(deps, ctx.request.body, baseUrl(ctx)));
  });
  router.post("/api/pairing/token", op("pairing.token"), async (ctx) => {
    if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
    reply(ctx, "pairing.token", await pollPairing(deps, ctx.request.body));
  });

  // ---- sign-in ------------------------------------------------------------
  const signIn = async (ctx: Context, person: string, provider: "local" | "github", githubToken?: string) => {
    const s = await createConsoleSession(deps, { person, provider, ...(githubToken ? { githubToken } : {}) });
    ctx.cookies.set(SESSION_COOKIE, s.cookie, { httpOnly: true, sameSite: "lax", secure: ctx.secure, path: "/", expires: s.expiresAt, overwrite: true });
  };

  router.get("/auth/local", op("auth.local"), async (ctx) => {
    if (config.github) throw new CohentError("FORBIDDEN", "This server signs people in with GitHub.");
    const token = typeof ctx.query.token === "string" ? ctx.query.token : "";
    if (!token || !(await redeemLoginLink(deps, token))) {
      ctx.redirect("/signin?error=link");
      return;
    }
    await signIn(ctx, "admin", "local");
    ctx.redirect(safeNext(ctx.query.next));
  });

  router.get("/auth/github", op("auth.github"), async (ctx) => {
    if (!config.github) throw new CohentError("FORBIDDEN", "GitHub sign-in is not configured on this server.");
    const state = randomBytes(24).toString("base64url");
    const payload = `${state}.${Buffer.from(safeNext(ctx.query.next)).toString("base64url")}`;
    ctx.cookies.set(STATE_COOKIE, payload, { httpOnly: true, sameSite: "lax", secure: ctx.secure, path: "/auth/github", maxAge: 10 * 60_000, overwrite: true });
    ctx.redirect(githubOAuth(config.github, `${baseUrl(ctx)}/auth/github/callback`).authorizationUrl(state).toString());
  });

  router.get("/auth/github/callback", op("auth.github"), async (ctx) => {
    if (!config.github) throw new CohentError("FORBIDDEN", "GitHub sign-in is not configured on this server.");
    const [state, nextB64] = (ctx.cookies.get(STATE_COOKIE) ?? "").split(".");
    ctx.cookies.set(STATE_COOKIE, null, { path: "/auth/github" });
    const code = typeof ctx.query.code === "string" ? ctx.query.code : "";
    if (!state || !code || typeof ctx.query.state !== "string" || !sameSecret(state, ctx.query.state)) {
      ctx.redirect("/signin?error=state");
      return;
    }
    try {
      const gh = githubOAuth(config.github, `${baseUrl(ctx)}/auth/github/callback`);
      const accessToken = await gh.exchange(code);
      const login = await githubLogin(config.github, accessToken);
      await signIn(ctx, login, "github", accessToken);
    } catch (err) {
      deps.log.warn({ err: String(err) }, "github sign-in failed");
      ctx.redirect("/signin?error=github");
      return;
    }
    ctx.redirect(safeNext(Buffer.from(nextB64 ?? "", "base64url").toString()));
  });

  // ---- console session ------------------------------------------------------
  const identify = async (ctx: Context): Promise<ConsoleIdentity | null> => {
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    return cookie ? findConsoleSession(deps, cookie) : null;
  };

  /** Console routes: a signed-in browser, and on state changes the CSRF token and a same-origin request. */
  const requireConsole = async (ctx: Context, next: Next) => {
    const who = await identify(ctx);
    if (!who) {
      const bearer = /^Bearer\s/i.test(ctx.get("authorization"));
      throw new CohentError("UNAUTHENTICATED", bearer ? "Agent tokens do not work on console routes; sign in to the Control Room." : "Sign in to the Control Room.");
    }
    if (!["GET", "HEAD"].includes(ctx.method)) {
      const origin = ctx.get("origin");
      if (origin && origin !== selfOrigin(ctx) && origin !== config.publicUrl) throw new CohentError("CSRF_REJECTED", "Cross-origin request refused.");
      if (!sameSecret(ctx.get(CSRF_HEADER), who.csrfToken)) throw new CohentError("CSRF_REJECTED");
      if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
    }
    ctx.state.console = who;
    await next();
  };

  /** Local admin sees everything; a GitHub person only repositories GitHub says they can push to. */
  const mayUse = async (who: ConsoleIdentity, repo: string): Promise<boolean> => {
    if (who.provider === "local") return true;
    if (!config.github || !who.githubToken) return false;
    const key = `${who.id}:${repo.toLowerCase()}`;
    const hit = pushCache.get(key);
    if (hit && Date.now() - hit.at < 60_000) return hit.ok;
    const ok = await githubCanPush(config.github, who.githubToken, repo).catch(() => false);
    pushCache.set(key, { ok, at: Date.now() });
    return ok;
  };
  const assertUse = async (ctx: Context, repo: string) => {
    if (!(await mayUse(ctx.state.console as ConsoleIdentity, repo))) {
      throw new CohentError("FORBIDDEN", `GitHub does not list you as able to push to ${repo}.`);
    }
  };
  const repoParam = (ctx: Context) => admin.RepoName.parse(`${ctx.params.owner}/${ctx.params.name}`);
  const sinceParam = (ctx: Context, fallback: string) => parseSinceText(typeof ctx.query.since === "string" ? ctx.query.since : fallback, deps.clock());

  router.get("/api/console/me", op("console.me"), async (ctx) => {
    const who = await identify(ctx);
    reply(ctx, "console.me", who ? { signedIn: true, mode, person: who.person, provider: who.provider, csrfToken: who.csrfToken } : { signedIn: false, mode });
  });

  const api = new Router({ prefix: "/api/console" });
  api.use(requireConsole);

  api.post("/logout", op("console.logout"), async (ctx) => {
    await endConsoleSession(deps, (ctx.state.console as ConsoleIdentity).id);
    ctx.cookies.set(SESSION_COOKIE, null, { path: "/" });
    reply(ctx, "console.logout", { signedIn: false });
  });

  api.get("/events", op("console.events"), async (ctx) => {
    ctx.status = 200;
    ctx.respond = false;
    ctx.req.socket.setTimeout(0);
    ctx.res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive", "x-accel-buffering": "no" });
    ctx.res.write("retry: 1000\n\n");
    const send = (version: string) => ctx.res.write(`event: change\ndata: ${JSON.stringify({ version })}\n\n`);
    const unsubscribe = live.subscribe(send);
    const heartbeat = setInterval(() => ctx.res.write(": keep-alive\n\n"), 15_000);
    await new Promise<void>((resolve) => ctx.res.once("close", resolve));
    clearInterval(heartbeat);
    unsubscribe();
  });

  api.get("/repos", op("console.repos"), async (ctx) => {
    const who = ctx.state.console as ConsoleIdentity;
    const all = await listRepositories(deps);
    const visible = [];
    for (const r of all) if (await mayUse(who, r.name)) visible.push(r);
    const pairings = [];
    for (const p of await pendingPairings(deps)) if (await mayUse(who, p.repo)) pairings.push(p);
    reply(ctx, "console.repos", { repos: visible, pairings });
  });

  api.get("/repos/:owner/:name", op("console.repo"), async (ctx) => {
    const name = repoParam(ctx);
    await assertUse(ctx, name);
    reply(ctx, "console.repo", await repoOverview(deps, name));
  });

  api.get("/repos/:owner/:name/metrics", op("console.metrics"), async (ctx) => {
    const name = repoParam(ctx);
    await assertUse(ctx, name);
    reply(ctx, "console.metrics", await metricsSeries(deps, name, sinceParam(ctx, "24h")));
  });

  api.get("/repos/:owner/:name/recap", op("console.recap"), async (ctx) => {
    const name = repoParam(ctx);
    await assertUse(ctx, name);
    const r = await recap(deps, name, sinceParam(ctx, "24h"));
    reply(ctx, "console.recap", { recap: r, text: renderRecap(r) });
  });

  api.post("/repos/:owner/:name/goal", op("console.goal"), async (ctx) => {
    const name = repoParam(ctx);
    await assertUse(ctx, name);
    const { goal } = z.strictObject({ goal: admin.Goal }).parse(ctx.request.body);
    const row = await admin.setGoal(deps, name, goal);
    reply(ctx, "console.goal", { repo: row.name, goal: row.goal });
  });

  api.get("/pairings/:code", op("console.pairing"), async (ctx) => {
    const view = await pairingByCode(deps, String(ctx.params.code));
    const who = ctx.state.console as ConsoleIdentity;
    reply(ctx, "console.pairing", { ...view, mayApprove: await mayUse(who, view.repo) });
  });

  for (const decision of ["approve", "deny"] as const) {
    api.post(`/pairings/:code/${decision}`, op(`console.pairing.${decision}`), async (ctx) => {
      const who = ctx.state.console as ConsoleIdentity;
      const view = await pairingByCode(deps, String(ctx.params.code));
      if (decision === "approve") await assertUse(ctx, view.repo);
      // A GitHub person's token works for them; a local admin approves for the requesting user.
      const person = who.provider === "github" ? who.person : view.user;
      reply(ctx, `console.pairing.${decision}`, await decidePairing(deps, { userCode: view.userCode, approve: decision === "approve", actor: who.person, person }));
    });
  }

  api.post("/sessions/:id/control", op("console.control"), async (ctx) => {
    const body = z.strictObject({ kind: admin.ControlKind, reason: z.string().trim().min(1).max(500).optional() }).parse(ctx.request.body);
    const session = await deps.db.prisma.session.findUnique({ where: { id: String(ctx.params.id) }, include: { repo: { select: { name: true } } } });
    if (!session) throw new CohentError("SESSION_NOT_FOUND");
    await assertUse(ctx, session.repo.name);
    const who = ctx.state.console as ConsoleIdentity;
    reply(ctx, "console.control", await admin.controlSession(deps, { sessionId: session.id, kind: body.kind, actor: who.person, ...(body.reason ? { reason: body.reason } : {}) }));
  });

  api.post("/tokens/:id/revoke", op("console.revoke"), async (ctx) => {
    const token = await deps.db.prisma.agentToken.findUnique({ where: { id: String(ctx.params.id) }, include: { repo: { select: { name: true } } } });
    if (!token) throw new CohentError("NOT_FOUND", "No such token.");
    await assertUse(ctx, token.repo.name);
    const row = await admin.revokeToken(deps, token.id);
    reply(ctx, "console.revoke", { id: row.id, revokedAt: row.revokedAt?.toISOString() ?? null });
  });

  router.use(api.routes(), api.allowedMethods({ throw: false }));
  return router;
}
