import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { CohentError, scopeOverlap } from "@cohent/protocol";
import { hashToken } from "../ids.js";
import { guardStatus } from "../lease.js";
import { listSessions, metrics, PATH_CATCH_KINDS, RepoName } from "./admin.js";
import type { Deps } from "./deps.js";
import { parseJson } from "./json.js";
import { pendingPairings } from "./pairing.js";
import { recordOf } from "./views.js";

/**
 * Operations for the Control Room: sign-in links, console sessions and the
 * read models its pages show. The HTTP layer (backend/src/console) only
 * parses, authorizes and renders.
 */

const secret = (prefix: string) => `${prefix}_${randomBytes(32).toString("base64url")}`;
const rowId = (prefix: string) => `${prefix}_${randomBytes(10).toString("hex")}`;

export const LOGIN_LINK_TTL_MS = 24 * 3_600_000;
export const CONSOLE_SESSION_TTL_MS = 7 * 24 * 3_600_000;

// ---- sign-in -----------------------------------------------------------

/** A one-time local admin sign-in secret (printed as a link by `cohent serve`). Only its hash is stored. */
export async function createLoginLink(deps: Deps): Promise<string> {
  const token = secret("cohl");
  const now = deps.clock();
  await deps.db.prisma.loginLink.create({
    data: { id: rowId("lnk"), tokenHash: hashToken(token), createdAt: now, expiresAt: new Date(now.getTime() + LOGIN_LINK_TTL_MS) },
  });
  return token;
}

/** Consumes a login link: true once, then never again. */
export async function redeemLoginLink(deps: Deps, token: string): Promise<boolean> {
  const now = deps.clock();
  const used = await deps.db.prisma.loginLink.updateMany({
    where: { tokenHash: hashToken(token), usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  return used.count === 1;
}

export interface ConsoleIdentity {
  id: string;
  person: string;
  provider: "local" | "github";
  csrfToken: string;
  githubToken: string | null;
}

/**
 * The person's GitHub access token is kept to re-check push rights, sealed
 * with a key derived from their session cookie: the database holds only the
 * cookie's hash, so a copy of the database cannot recover the token.
 */
function sealKey(cookie: string): Buffer {
  return Buffer.from(hkdfSync("sha256", cookie, "cohent", "github token at rest", 32));
}
export function sealGithubToken(token: string, cookie: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealKey(cookie), iv);
  const body = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
}
export function openGithubToken(sealed: string | null, cookie: string): string | null {
  const [v, iv, tag, body] = sealed?.split(".") ?? [];
  if (v !== "v1" || !iv || !tag || !body) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", sealKey(cookie), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

export async function createConsoleSession(
  deps: Deps,
  input: { person: string; provider: "local" | "github"; githubToken?: string },
): Promise<{ cookie: string; identity: ConsoleIdentity; expiresAt: Date }> {
  const cookie = secret("cohs");
  const now = deps.clock();
  const expiresAt = new Date(now.getTime() + CONSOLE_SESSION_TTL_MS);
  const row = await deps.db.prisma.consoleSession.create({
    data: {
      id: rowId("cs"), tokenHash: hashToken(cookie), csrfToken: randomBytes(24).toString("base64url"), person: input.person,
      provider: input.provider, githubToken: input.githubToken ? sealGithubToken(input.githubToken, cookie) : null, createdAt: now, expiresAt, lastSeenAt: now,
    },
  });
  return { cookie, expiresAt, identity: { id: row.id, person: row.person, provider: input.provider, csrfToken: row.csrfToken, githubToken: input.githubToken ?? null } };
}

export async function findConsoleSession(deps: Deps, cookie: string): Promise<ConsoleIdentity | null> {
  const now = deps.clock();
  const row = await deps.db.prisma.consoleSession.findUnique({ where: { tokenHash: hashToken(cookie) } });
  if (!row || row.expiresAt <= now) return null;
  if (now.getTime() - row.lastSeenAt.getTime() > 5 * 60_000) {
    await deps.db.prisma.consoleSession.update({ where: { id: row.id }, data: { lastSeenAt: now } });
  }
  return { id: row.id, person: row.person, provider: row.provider as ConsoleIdentity["provider"], csrfToken: row.csrfToken, githubToken: openGithubToken(row.githubToken, cookie) };
}

export async function endConsoleSession(deps: Deps, id: string): Promise<void> {
  await deps.db.prisma.consoleSession.deleteMany({ where: { id } });
}

// ---- change feed ---------------------------------------------------------

/**
 * A fingerprint of everything the console shows. The Event table is the
 * change log; pairings, tokens and sessions' last calls change outside it.
 */
export async function changeFingerprint(deps: Deps): Promise<string> {
  const p = deps.db.prisma;
  const [event, pairing, tokens, revoked, seen, repos] = await Promise.all([
    p.event.aggregate({ _max: { seq: true } }),
    p.pairing.aggregate({ _max: { updatedAt: true }, _count: true }),
    p.agentToken.count(),
    p.agentToken.count({ where: { revokedAt: { not: null } } }),
    p.session.aggregate({ _max: { lastSeenAt: true } }),
    p.repository.aggregate({ _count: true, _max: { createdAt: true } }),
  ]);
  return [
    event._max.seq ?? 0, pairing._count, pairing._max.updatedAt?.getTime() ?? 0, tokens, revoked,
    seen._max.lastSeenAt?.getTime() ?? 0, repos._count,
  ].join(":");
}

// ---- read models ---------------------------------------------------------

async function repoRow(deps: Deps, name: string) {
  const repo = await deps.db.prisma.repository.findUnique({ where: { name: RepoName.parse(name) } });
  if (!repo) throw new CohentError("REPOSITORY_NOT_FOUND", `No repository ${name}.`);
  return repo;
}

export async function listRepositories(deps: Deps) {
  const p = deps.db.prisma;
  const repos = await p.repository.findMany({ orderBy: { name: "asc" } });
  const pending = await pendingPairings(deps);
  return Promise.all(
    repos.map(async (r) => {
      const [open, tokens, people, lastEvent] = await Promise.all([
        p.intent.count({ where: { repoId: r.id, closedAt: null } }),
        p.agentToken.count({ where: { repoId: r.id, revokedAt: null } }),
        p.agentToken.findMany({ where: { repoId: r.id, revokedAt: null }, distinct: ["person"], select: { person: true } }),
        p.event.findFirst({ where: { repoId: r.id }, orderBy: { seq: "desc" }, select: { createdAt: true } }),
      ]);
      return {
        name: r.name, goal: r.goal, openIntents: open, activeTokens: tokens, people: people.map((x) => x.person),
        pendingPairings: pending.filter((x) => x.repo === r.name).length, lastActivityAt: lastEvent?.createdAt.toISOString() ?? null,
      };
    }),
  );
}

export interface PartyView {
  intentId: string;
  person: string;
  client: string | null;
  model: string | null;
  objective: string | null;
}

/** Everything the repository's live pages show, in one read. */
export async function repoOverview(deps: Deps, name: string) {
  const p = deps.db.prisma;
  const repo = await repoRow(deps, name);
  const now = deps.clock();
  const opts = { caseInsensitive: repo.caseInsensitive };
  const open = await p.intent.findMany({
    where: { repoId: repo.id, closedAt: null },
    include: { session: true, claim: true, checkpoints: { orderBy: { createdAt: "desc" }, take: 1 } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const catches = await p.guardCatch.findMany({ where: { repoId: repo.id, kind: "scope-conflict", createdAt: { gte: new Date(now.getTime() - 3_600_000) } }, orderBy: { createdAt: "desc" }, take: 100 });
  const decisions = await p.decision.findMany({ where: { repoId: repo.id, action: { in: ["wait", "duplicate", "handoff", "parallel"] } }, orderBy: { createdAt: "desc" }, take: 50 });

  // Parties named anywhere on the page, open or closed.
  const partyIds = new Set<string>([...decisions.flatMap((d) => [d.intentId, ...parseJson<string[]>(d.peerIds, [])]), ...catches.flatMap((c) => [c.intentId, ...parseJson<string[]>(c.peerIds, [])])]);
  const partyRows = await p.intent.findMany({ where: { id: { in: [...partyIds] } }, select: { id: true, person: true, client: true, model: true, record: true } });
  const parties = new Map<string, PartyView>(
    [...partyRows, ...open].map((r) => [r.id, { intentId: r.id, person: r.person, client: r.client, model: r.model, objective: recordOf(r)?.objective ?? null }]),
  );
  const party = (id: string): PartyView => parties.get(id) ?? { intentId: id, person: "unknown", client: null, model: null, objective: null };

  const live = open.map((r) => {
    const claim = parseJson<string[]>(r.claim?.paths, []);
    const hints = parseJson<string[]>(r.promptPaths, []);
    const guard = guardStatus(r.session.lastSeenAt, now, deps.lease);
    return { r, claim, hints, guard, record: recordOf(r) };
  });
  const work = live.map(({ r, claim, hints, guard, record }) => {
    const mine = claim.length ? claim : hints;
    const overlaps = live
      .filter((o) => o.r.id !== r.id && o.guard !== "expired" && guard !== "expired")
      .map((o) => {
        const theirs = o.claim.length ? o.claim : o.hints;
        const pairs = mine.length && theirs.length ? scopeOverlap(mine, theirs, opts) : [];
        return { with: party(o.r.id), paths: [...new Set(pairs.map((x) => x.mine))], claimed: claim.length > 0 && o.claim.length > 0 };
      })
      .filter((o) => o.paths.length > 0);
    const collisions = catches
      .filter((c) => c.intentId === r.id || parseJson<string[]>(c.peerIds, []).includes(r.id))
      .map((c) => ({
        at: c.createdAt.toISOString(), kind: c.kind, paths: parseJson<string[]>(c.paths, []),
        refused: party(c.intentId), holders: parseJson<string[]>(c.peerIds, []).map(party),
      }));
    const cp = r.checkpoints[0];
    return {
      intentId: r.id, sessionId: r.sessionId, person: r.person, client: r.client, model: r.model, prompt: r.prompt.slice(0, 400),
      objective: record?.objective ?? null, outputs: record?.outputs ?? [], dependsOn: record?.dependsOn ?? [], capabilities: record?.capabilities ?? [],
      state: r.state, lastAction: r.lastAction, scope: claim, pathHints: hints, overlaps, collisions,
      lastCheckpoint: cp ? { status: cp.status, summary: cp.summary, at: cp.createdAt.toISOString() } : null,
      guard, lastCallAt: r.session.lastSeenAt.toISOString(), control: r.session.control, controlReason: r.session.controlReason,
      createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString(),
    };
  });

  const commands = await p.command.findMany({ where: { repoId: repo.id }, orderBy: { createdAt: "desc" }, take: 50, include: { session: { include: { token: { select: { person: true } } } } } });
  const tokens = await p.agentToken.findMany({ where: { repoId: repo.id }, orderBy: { createdAt: "desc" }, include: { sessions: { select: { lastSeenAt: true }, orderBy: { lastSeenAt: "desc" }, take: 1 } } });
  const issuedBy = new Map(
    (await p.pairing.findMany({ where: { tokenId: { in: tokens.map((t) => t.id) } }, select: { tokenId: true, machine: true, approvedBy: true } })).map((x) => [x.tokenId, x]),
  );

  return {
    repo: { name: repo.name, goal: repo.goal, createdAt: repo.createdAt.toISOString() },
    serverTime: now.toISOString(),
    work,
    decisions: decisions.map((d) => ({
      id: d.id, action: d.action, reason: d.reason, at: d.createdAt.toISOString(), subject: party(d.intentId), peers: parseJson<string[]>(d.peerIds, []).map(party),
    })),
    commands: commands.map((c) => ({
      id: c.id, kind: c.kind, actor: c.actor, reason: c.reason, at: c.createdAt.toISOString(), sessionId: c.sessionId,
      person: c.session.token.person, client: c.session.client,
    })),
    sessions: await listSessions(deps, repo.name),
    tokens: tokens.map((t) => ({
      id: t.id, person: t.person, client: t.client, createdAt: t.createdAt.toISOString(), revokedAt: t.revokedAt?.toISOString() ?? null,
      lastCallAt: t.sessions[0]?.lastSeenAt.toISOString() ?? null, machine: issuedBy.get(t.id)?.machine ?? null, approvedBy: issuedBy.get(t.id)?.approvedBy ?? null,
    })),
    pairings: await pendingPairings(deps, repo.name),
  };
}

/** Counters and small time series for the metrics page. */
export async function metricsSeries(deps: Deps, name: string, since: Date, buckets = 24) {
  const p = deps.db.prisma;
  const repo = await repoRow(deps, name);
  const now = deps.clock();
  const span = Math.max(1, now.getTime() - since.getTime());
  const width = span / buckets;
  const where = { repoId: repo.id, createdAt: { gte: since } };
  const [decisions, catches, packets, commands] = await Promise.all([
    p.decision.findMany({ where, select: { createdAt: true, action: true }, take: 50_000 }),
    p.guardCatch.findMany({ where: { ...where, kind: { in: PATH_CATCH_KINDS } }, select: { createdAt: true }, take: 50_000 }),
    p.packet.findMany({ where, select: { createdAt: true, tokens: true, ackedChars: true }, take: 50_000 }),
    p.command.findMany({ where, select: { createdAt: true }, take: 50_000 }),
  ]);
  const series = () => new Array<number>(buckets).fill(0);
  const slot = (d: Date) => Math.min(buckets - 1, Math.max(0, Math.floor((d.getTime() - since.getTime()) / width)));
  const out = { overlaps: series(), redirections: series(), waits: series(), guardCatches: series(), packets: series(), packetTokens: series(), injectedChars: series(), commands: series() };
  for (const d of decisions) {
    const i = slot(d.createdAt);
    if (["wait", "duplicate", "handoff", "parallel"].includes(d.action)) out.overlaps[i]! += 1;
    if (["wait", "duplicate", "handoff"].includes(d.action)) out.redirections[i]! += 1;
    if (d.action === "wait") out.waits[i]! += 1;
  }
  for (const c of catches) {
    const i = slot(c.createdAt);
    out.guardCatches[i]! += 1;
    out.overlaps[i]! += 1;
  }
  for (const k of packets) {
    const i = slot(k.createdAt);
    out.packets[i]! += 1;
    out.packetTokens[i]! += k.tokens;
    out.injectedChars[i]! += k.ackedChars ?? 0;
  }
  for (const c of commands) out.commands[slot(c.createdAt)]! += 1;
  return {
    totals: await metrics(deps, repo.name, since),
    since: since.toISOString(),
    until: now.toISOString(),
    bucketMs: Math.round(width),
    series: out,
  };
}
