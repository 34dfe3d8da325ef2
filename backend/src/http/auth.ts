import { randomBytes, timingSafeEqual } from "node:crypto";
import Router from "@koa/router";
import type { Context, Next } from "koa";
import { CohentError, CSRF_HEADER, type SignInMode } from "@cohent/protocol";
import type { ConsoleConfig } from "../config.js";
import type { Deps } from "../operations/deps.js";
import {
  createConsoleSession,
  findConsoleSession,
  redeemLoginLink,
  type ConsoleIdentity,
} from "../operations/people/signin.js";
import { named as op } from "./envelope.js";
import { githubLogin, githubOAuth } from "./github.js";

export const SESSION_COOKIE = "cohent_console";
const STATE_COOKIE = "cohent_oauth_state";

/** Only same-site relative paths: a sign-in never redirects elsewhere. */
function safeNext(next: unknown): string {
  return typeof next === "string" && /^\/(?![/\\])/.test(next) ? next : "/";
}

export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

// Koa 3's ctx.origin is the Origin request header, not this server's origin.
export const selfOrigin = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;

/**
 * People's authentication: the sign-in routes (a one-time local link, or
 * GitHub OAuth) and the console-session middleware. Console routes take only
 * a console session cookie; agent tokens are not looked at here, just as
 * /api/agent never looks at cookies.
 */
export function consoleAuth(deps: Deps, config: ConsoleConfig) {
  const router = new Router();
  const baseUrl = (ctx: Context) => config.publicUrl ?? selfOrigin(ctx);
  const signIn = async (ctx: Context, person: string, provider: SignInMode, githubToken?: string) => {
    const s = await createConsoleSession(deps, { person, provider, ...(githubToken ? { githubToken } : {}) });
    ctx.cookies.set(SESSION_COOKIE, s.cookie, {
      httpOnly: true,
      sameSite: "lax",
      secure: ctx.secure,
      path: "/",
      expires: s.expiresAt,
      overwrite: true,
    });
  };

  router.get("/auth/local", op("auth.local"), async (ctx) => {
    if (config.github) throw new CohentError("FORBIDDEN", "This server signs people in with GitHub.");
    const token = typeof ctx.query.token === "string" ? ctx.query.token : "";
    if (!token || !(await redeemLoginLink(deps, token))) return ctx.redirect("/signin?error=link");
    await signIn(ctx, "admin", "local");
    ctx.redirect(safeNext(ctx.query.next));
  });

  router.get("/auth/github", op("auth.github"), async (ctx) => {
    if (!config.github)
      throw new CohentError("FORBIDDEN", "GitHub sign-in is not configured on this server.");
    const state = randomBytes(24).toString("base64url");
    const payload = `${state}.${Buffer.from(safeNext(ctx.query.next)).toString("base64url")}`;
    ctx.cookies.set(STATE_COOKIE, payload, {
      httpOnly: true,
      sameSite: "lax",
      secure: ctx.secure,
      path: "/auth/github",
      maxAge: 10 * 60_000,
      overwrite: true,
    });
    ctx.redirect(
      githubOAuth(config.github, `${baseUrl(ctx)}/auth/github/callback`)
        .authorizationUrl(state)
        .toString(),
    );
  });

  router.get("/auth/github/callback", op("auth.github"), async (ctx) => {
    if (!config.github)
      throw new CohentError("FORBIDDEN", "GitHub sign-in is not configured on this server.");
    const [state, nextB64] = (ctx.cookies.get(STATE_COOKIE) ?? "").split(".");
    ctx.cookies.set(STATE_COOKIE, null, { path: "/auth/github" });
    const code = typeof ctx.query.code === "string" ? ctx.query.code : "";
    if (!state || !code || typeof ctx.query.state !== "string" || !sameSecret(state, ctx.query.state))
      return ctx.redirect("/signin?error=state");
    try {
      const gh = githubOAuth(config.github, `${baseUrl(ctx)}/auth/github/callback`);
      const accessToken = await gh.exchange(code);
      await signIn(ctx, await githubLogin(config.github, accessToken), "github", accessToken);
    } catch (err) {
      deps.log.warn({ err: String(err) }, "github sign-in failed");
      return ctx.redirect("/signin?error=github");
    }
    ctx.redirect(safeNext(Buffer.from(nextB64 ?? "", "base64url").toString()));
  });

  const identify = async (ctx: Context): Promise<ConsoleIdentity | null> => {
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    return cookie ? findConsoleSession(deps, cookie) : null;
  };

  /** Console routes: a signed-in browser, and on state changes the CSRF token and a same-origin request. */
  const requireConsole = async (ctx: Context, next: Next) => {
    const who = await identify(ctx);
    if (!who) {
      const bearer = /^Bearer\s/i.test(ctx.get("authorization"));
      throw new CohentError(
        "UNAUTHENTICATED",
        bearer
          ? "Agent tokens do not work on console routes; sign in to the Control Room."
          : "Sign in to the Control Room.",
      );
    }
    if (!["GET", "HEAD"].includes(ctx.method)) {
      const origin = ctx.get("origin");
      if (origin && origin !== selfOrigin(ctx) && origin !== config.publicUrl)
        throw new CohentError("CSRF_REJECTED", "Cross-origin request refused.");
      if (!sameSecret(ctx.get(CSRF_HEADER), who.csrfToken)) throw new CohentError("CSRF_REJECTED");
      if (!ctx.is("application/json")) throw new CohentError("UNSUPPORTED_MEDIA_TYPE");
    }
    ctx.state.console = who;
    await next();
  };

  return { router, identify, requireConsole };
}
