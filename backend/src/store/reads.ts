import { OVERLAP_ACTIONS, type CommandKind } from "@cohent/protocol";
import { METRIC_NOTICE_KINDS, QUEUE_EVENT_KINDS, type MetricRows } from "../core/metrics.js";
import type { RecapRow } from "../core/recap.js";
import type { PrismaTx } from "./db.js";
import { commitOf, list, recordOf, toCommit, toDecision } from "./rows.js";

/** The read models of the console, the admin CLI and the recap: queries no agent call runs. */
export const reads = (c: PrismaTx) => ({
  /** The rows every metric is computed from, optionally since an instant. */
  metricRows: async (repoId: string, since?: Date): Promise<MetricRows> => {
    const where = { repoId, ...(since ? { createdAt: { gte: since } } : {}) };
    const [decisions, catches, packets, commands, events, notices, asks] = await Promise.all([
      c.decision.findMany({ where, select: { createdAt: true, action: true } }),
      c.guardCatch.findMany({ where, select: { createdAt: true, kind: true } }),
      c.packet.findMany({ where, select: { createdAt: true, tokens: true, ackedChars: true } }),
      c.command.findMany({ where, select: { createdAt: true } }),
      c.event.findMany({
        where: { ...where, kind: { in: [...QUEUE_EVENT_KINDS] } },
        select: { createdAt: true, kind: true },
      }),
      c.notice.findMany({
        where: { ...where, kind: { in: [...METRIC_NOTICE_KINDS] } },
        select: { createdAt: true, kind: true, waitedMs: true },
      }),
      c.releaseAsk.findMany({ where, select: { createdAt: true, honouredAt: true } }),
    ]);
    return { decisions, catches, packets, commands, events, notices, asks };
  },
  /** A fingerprint of everything the console shows: the change log and what changes outside it. */
  fingerprint: async () => {
    const [event, pairing, tokens, revoked, seen, repos, catches, wiring] = await Promise.all([
      c.event.aggregate({ _max: { seq: true } }),
      c.pairing.aggregate({ _max: { updatedAt: true }, _count: true }),
      c.agentToken.count(),
      c.agentToken.count({ where: { revokedAt: { not: null } } }),
      // A session's host report (or its first guarded call) writes no event either.
      c.session.aggregate({ _max: { lastSeenAt: true, hostReportedAt: true } }),
      c.repository.aggregate({ _count: true, _max: { createdAt: true } }),
      // A refused claim writes no event, and lease renewals are coalesced: count the catches themselves.
      c.guardCatch.count(),
      // A wiring report writes no event either; clearing one changes only its clearedAt.
      c.wiringReport.aggregate({ _count: { clearedAt: true }, _max: { reportedAt: true, clearedAt: true } }),
    ]);
    return [
      event._max.seq ?? 0,
      pairing._count,
      pairing._max.updatedAt?.getTime() ?? 0,
      tokens,
      revoked,
      seen._max.lastSeenAt?.getTime() ?? 0,
      seen._max.hostReportedAt?.getTime() ?? 0,
      repos._count,
      catches,
      wiring._count.clearedAt,
      wiring._max.reportedAt?.getTime() ?? 0,
      wiring._max.clearedAt?.getTime() ?? 0,
    ].join(":");
  },
  repoSummary: async (repoId: string) => {
    const [openIntents, activeTokens, people, lastEvent] = await Promise.all([
      c.intent.count({ where: { repoId, closedAt: null } }),
      c.agentToken.count({ where: { repoId, revokedAt: null } }),
      c.agentToken.findMany({
        where: { repoId, revokedAt: null },
        distinct: ["person"],
        select: { person: true },
      }),
      c.event.findFirst({ where: { repoId }, orderBy: { seq: "desc" }, select: { createdAt: true } }),
    ]);
    return {
      openIntents,
      activeTokens,
      people: people.map((x) => x.person),
      lastActivityAt: lastEvent?.createdAt ?? null,
    };
  },
  scopeCatches: async (repoId: string, since: Date) =>
    (
      await c.guardCatch.findMany({
        where: { repoId, kind: "scope-conflict", createdAt: { gte: since } },
        orderBy: { createdAt: "desc" },
        take: 100,
      })
    ).map((g) => ({
      intentId: g.intentId,
      agentId: g.agentId,
      kind: g.kind,
      paths: list(g.paths),
      peerIds: list(g.peerIds),
      at: g.createdAt,
    })),
  /** Every refusal made for a sub-agent, newest first: the live page names the sub-agents of each intent. */
  subagentCatches: async (repoId: string, since: Date) =>
    (
      await c.guardCatch.findMany({
        where: { repoId, agentId: { not: null }, createdAt: { gte: since } },
        orderBy: { createdAt: "desc" },
        take: 200,
        select: { intentId: true, agentId: true, kind: true, createdAt: true },
      })
    ).map((g) => ({ intentId: g.intentId, agentId: g.agentId!, kind: g.kind, at: g.createdAt })),
  overlapDecisions: async (repoId: string, take: number) =>
    (
      await c.decision.findMany({
        where: { repoId, action: { in: [...OVERLAP_ACTIONS] } },
        orderBy: { createdAt: "desc" },
        take,
      })
    ).map(toDecision),
  commands: async (repoId: string, take: number) =>
    (
      await c.command.findMany({
        where: { repoId },
        orderBy: { createdAt: "desc" },
        take,
        include: { session: { select: { client: true, token: { select: { person: true } } } } },
      })
    ).map((x) => ({
      id: x.id,
      kind: x.kind as CommandKind,
      actor: x.actor,
      reason: x.reason,
      at: x.createdAt,
      sessionId: x.sessionId,
      person: x.session.token.person,
      client: x.session.client,
    })),
  tokens: async (repoId: string) => {
    const rows = await c.agentToken.findMany({
      where: { repoId },
      orderBy: { createdAt: "desc" },
      include: { sessions: { select: { lastSeenAt: true }, orderBy: { lastSeenAt: "desc" }, take: 1 } },
    });
    const issued = await c.pairing.findMany({
      where: { tokenId: { in: rows.map((t) => t.id) } },
      select: { tokenId: true, machine: true, approvedBy: true },
    });
    const by = new Map(issued.map((x) => [x.tokenId, x]));
    return rows.map((t) => ({
      id: t.id,
      person: t.person,
      client: t.client,
      createdAt: t.createdAt,
      revokedAt: t.revokedAt,
      lastCallAt: t.sessions[0]?.lastSeenAt ?? null,
      machine: by.get(t.id)?.machine ?? null,
      approvedBy: by.get(t.id)?.approvedBy ?? null,
    }));
  },
  /** Work that changed in the window, and open blocked or waiting work that did not. */
  recapIntents: async (repoId: string, since: Date): Promise<RecapRow[]> => {
    const include = {
      claim: true,
      checkpoints: { orderBy: [{ createdAt: "asc" as const }, { id: "asc" as const }] },
    };
    const orderBy = [{ updatedAt: "asc" as const }, { id: "asc" as const }];
    const [stalled, changed] = await Promise.all([
      c.intent.findMany({
        where: {
          repoId,
          closedAt: null,
          updatedAt: { lt: since },
          OR: [{ state: "blocked" }, { lastAction: "wait" }],
        },
        include,
        orderBy,
      }),
      c.intent.findMany({
        where: { repoId, OR: [{ closedAt: null }, { closedAt: { gte: since } }], updatedAt: { gte: since } },
        include,
        orderBy,
      }),
    ]);
    return [...stalled, ...changed].map((r) => ({
      id: r.id,
      person: r.person,
      client: r.client,
      model: r.model,
      prompt: r.prompt,
      record: recordOf(r.record),
      state: r.state,
      lastAction: r.lastAction,
      closedAt: r.closedAt,
      updatedAt: r.updatedAt,
      scope: list(r.claim?.paths),
      checkpoints: r.checkpoints.map((k) => ({
        summary: k.summary,
        paths: list(k.paths),
        ...(commitOf(k.source) ? { commit: toCommit(k) } : {}),
      })),
    }));
  },
  commandCount: (repoId: string, since: Date) =>
    c.command.count({ where: { repoId, createdAt: { gte: since } } }),
});
