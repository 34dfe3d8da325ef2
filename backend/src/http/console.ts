import Router from "@koa/router";
import type { Context, Middleware } from "koa";
import {
  CohentError,
  ControlRequest,
  GoalRequest,
  RepoListQuery,
  RepoName,
  LIVE_PATH,
  ScopeReleaseRequest,
  type ConsoleMe,
  type RecapResponse,
  type RepoList,
} from "@cohent/protocol";
import type { ConsoleConfig } from "../config.js";
import { parseSince } from "../core/since.js";
import type { Deps } from "../operations/deps.js";
import * as admin from "../operations/people/admin.js";
import { metricsSeries } from "../operations/people/metrics.js";
import { repoOverview } from "../operations/people/overview.js";
import { decidePairing, pairingByCode, pendingPairings } from "../operations/people/pairing.js";
import { recap, renderRecap } from "../operations/people/recap.js";
import { repositoryPage } from "../operations/people/repo-list.js";
import { requestRestore } from "../operations/people/restore-request.js";
import { releaseScope, scopesView } from "../operations/people/scopes.js";
import { endConsoleSession, type ConsoleIdentity } from "../operations/people/signin.js";
import { repoByName } from "../operations/shared/repos.js";
import { consoleAuth, SESSION_COOKIE } from "./auth.js";
import { named as op, reply as envelope } from "./envelope.js";
import { githubCanPush } from "./github.js";
import { liveStream } from "./live.js";

/** The Control Room's JSON and SSE API, behind a console session (http/auth); `body` reads a JSON body (body.ts). */
export function consoleRoutes(deps: Deps, config: ConsoleConfig, body: Middleware): Router {
  const { router, identify, requireConsole } = consoleAuth(deps, config);
  const mode = config.github ? "github" : "local";
  const pushCache = new Map<string, { ok: boolean; at: number }>();
  const reply = (ctx: Context, operation: string, data: unknown) => envelope(deps, ctx, operation, data);
  const who = (ctx: Context) => ctx.state.console as ConsoleIdentity;

  /** Local admin sees everything; a GitHub person only repositories GitHub says they can push to. */
  const mayUse = async (person: ConsoleIdentity, repo: string): Promise<boolean> => {
    if (person.provider === "local") return true;
    if (!config.github || !person.githubToken) return false;
    const key = `${person.id}:${repo.toLowerCase()}`;
    const hit = pushCache.get(key);
    if (hit && Date.now() - hit.at < 60_000) return hit.ok;
    const ok = await githubCanPush(config.github, person.githubToken, repo).catch(() => false);
    pushCache.set(key, { ok, at: Date.now() });
    return ok;
  };
  const assertUse = async (ctx: Context, repo: string) => {
    if (!(await mayUse(who(ctx), repo)))
      throw new CohentError("FORBIDDEN", `GitHub does not list you as able to push to ${repo}.`);
  };
  /** The repository named in the path, once the person may use it. */
  const repoParam = async (ctx: Context) => {
    const name = RepoName.parse(`${ctx.params.owner}/${ctx.params.name}`);
    await assertUse(ctx, name);
    return name;
  };
  const sinceParam = (ctx: Context) =>
    parseSince(typeof ctx.query.since === "string" ? ctx.query.since : "24h", deps.clock());
  const visible = async <T>(ctx: Context, items: T[], repoOf: (x: T) => string) => {
    const out: T[] = [];
    for (const x of items) if (await mayUse(who(ctx), repoOf(x))) out.push(x);
    return out;
  };

  router.get("/api/console/me", op("console.me"), async (ctx) => {
    const person = await identify(ctx);
    const me: ConsoleMe = person
      ? {
          signedIn: true,
          mode,
          person: person.person,
          provider: person.provider,
          csrfToken: person.csrfToken,
        }
      : { signedIn: false, mode };
    reply(ctx, "console.me", me);
  });

  const api = new Router({ prefix: "/api/console" });
  // The body is read only for a signed-in person whose state change passed the CSRF and media type checks.
  api.use(requireConsole, body);

  api.post("/logout", op("console.logout"), async (ctx) => {
    await endConsoleSession(deps, who(ctx).id);
    ctx.cookies.set(SESSION_COOKIE, null, { path: "/" });
    reply(ctx, "console.logout", { signedIn: false });
  });

  // ?repo=owner/name: that repository's events, once the person may use it; without, the list's summary only.
  const stream = liveStream(deps);
  api.get(LIVE_PATH.slice("/api/console".length), op("console.events"), async (ctx) => {
    const raw = ctx.query.repo;
    if (raw === undefined) return stream(ctx, null);
    const name = RepoName.safeParse(raw);
    if (!name.success)
      throw new CohentError("INVALID_INPUT", "repo takes one repository's name, owner/name.", {
        query: "repo",
      });
    await assertUse(ctx, name.data);
    return stream(ctx, await repoByName(deps.store, name.data));
  });

  api.get("/repos", op("console.repos"), async (ctx) => {
    const query = RepoListQuery.safeParse(ctx.query);
    if (!query.success) {
      const issue = query.error.issues[0]!;
      const field = issue.path.map(String).join(".") || "query";
      throw new CohentError(
        "INVALID_INPUT",
        issue.code === "unrecognized_keys"
          ? `The repository list takes q, page and limit only (got ${issue.keys.join(", ")}).`
          : issue.code === "invalid_type"
            ? `${field} is given once at most.`
            : issue.message,
        { query: field },
      );
    }
    const pending = await pendingPairings(deps);
    const person = who(ctx);
    const list = await repositoryPage(
      deps,
      query.data,
      pending,
      person.provider === "local" ? null : (repo) => mayUse(person, repo),
    );
    reply(ctx, "console.repos", {
      ...list,
      pairings: await visible(ctx, pending, (p) => p.repo),
    } satisfies RepoList);
  });

  api.get("/repos/:owner/:name", op("console.repo"), async (ctx) => {
    reply(ctx, "console.repo", await repoOverview(deps, await repoParam(ctx)));
  });

  api.get("/repos/:owner/:name/metrics", op("console.metrics"), async (ctx) => {
    reply(ctx, "console.metrics", await metricsSeries(deps, await repoParam(ctx), sinceParam(ctx)));
  });

  api.get("/repos/:owner/:name/recap", op("console.recap"), async (ctx) => {
    const r = await recap(deps, await repoParam(ctx), sinceParam(ctx));
    reply(ctx, "console.recap", { recap: r, text: renderRecap(r) } satisfies RecapResponse);
  });

  api.get("/repos/:owner/:name/scopes", op("console.scopes"), async (ctx) => {
    reply(ctx, "console.scopes", await scopesView(deps, await repoParam(ctx)));
  });

  // A person frees a claim: a human command (CSRF and same origin, like every state change here).
  api.post("/repos/:owner/:name/scopes/:intentId/release", op("console.scope.release"), async (ctx) => {
    const repo = await repoParam(ctx);
    const body = ScopeReleaseRequest.parse(ctx.request.body ?? {});
    reply(
      ctx,
      "console.scope.release",
      await releaseScope(deps, {
        repo,
        intentId: String(ctx.params.intentId),
        actor: who(ctx).person,
        ...(body.reason ? { reason: body.reason } : {}),
      }),
    );
  });

  // A person asks the writer's adapter to put a caught shell write back: a human command, as a release.
  api.post("/repos/:owner/:name/shell-writes/:id/restore", op("console.shellwrite.restore"), async (ctx) => {
    const repo = await repoParam(ctx);
    const input = { repo, catchId: String(ctx.params.id), actor: who(ctx).person };
    reply(ctx, "console.shellwrite.restore", await requestRestore(deps, input));
  });

  api.post("/repos/:owner/:name/goal", op("console.goal"), async (ctx) => {
    const name = await repoParam(ctx);
    const { goal } = GoalRequest.parse(ctx.request.body);
    const row = await admin.setGoal(deps, name, goal);
    reply(ctx, "console.goal", { repo: row.name, goal: row.goal });
  });

  api.get("/pairings/:code", op("console.pairing"), async (ctx) => {
    const view = await pairingByCode(deps, String(ctx.params.code));
    reply(ctx, "console.pairing", { ...view, mayApprove: await mayUse(who(ctx), view.repo) });
  });

  for (const decision of ["approve", "deny"] as const) {
    api.post(`/pairings/:code/${decision}`, op(`console.pairing.${decision}`), async (ctx) => {
      const person = who(ctx);
      const view = await pairingByCode(deps, String(ctx.params.code));
      if (decision === "approve") await assertUse(ctx, view.repo);
      // A GitHub person's token works for them; a local admin approves for the requesting user.
      const worksFor = person.provider === "github" ? person.person : view.user;
      reply(
        ctx,
        `console.pairing.${decision}`,
        await decidePairing(deps, {
          userCode: view.userCode,
          approve: decision === "approve",
          actor: person.person,
          person: worksFor,
        }),
      );
    });
  }

  api.post("/sessions/:id/control", op("console.control"), async (ctx) => {
    const body = ControlRequest.parse(ctx.request.body);
    const session = await admin.findSession(deps, String(ctx.params.id));
    await assertUse(ctx, session.repoName);
    reply(
      ctx,
      "console.control",
      await admin.controlSession(deps, {
        sessionId: session.id,
        kind: body.kind,
        actor: who(ctx).person,
        ...(body.reason ? { reason: body.reason } : {}),
      }),
    );
  });

  api.post("/tokens/:id/revoke", op("console.revoke"), async (ctx) => {
    const token = await admin.findToken(deps, String(ctx.params.id));
    await assertUse(ctx, token.repoName);
    const row = await admin.revokeToken(deps, token.id);
    reply(ctx, "console.revoke", { id: row.id, revokedAt: row.revokedAt?.toISOString() ?? null });
  });

  router.use(api.routes(), api.allowedMethods({ throw: false }));
  return router;
}
