import { normalizeRepoPaths, type GuardRequest, type GuardResponse, type StatusResponse } from "@cohent/protocol";
import { newId } from "../ids.js";
import { guardStatus } from "../lease.js";
import type { Caller, Deps } from "./deps.js";
import { parseJson, toJson } from "./json.js";
import { ownIntent, recordOf } from "./views.js";

/** Guard: records a refusal the adapter made on its own (outside-scope writes, edits before an intent, …). */
export async function guardReport(deps: Deps, caller: Caller, req: GuardRequest): Promise<GuardResponse> {
  const paths = normalizeRepoPaths(req.paths);
  return deps.db.tx(async (tx) => {
    if (req.intentId) await ownIntent(tx, caller, req.intentId, { open: false });
    await tx.guardCatch.create({
      data: {
        id: newId("gc"), repoId: caller.repo.id, intentId: req.intentId ?? "", kind: req.kind,
        paths: toJson(paths), peerIds: toJson([]), createdAt: deps.clock(),
      },
    });
    return { recorded: true };
  });
}

/**
 * Status: the open work of this token's person, one row per intent, with the
 * guard status of the session that announced it. Reading it renews only the
 * caller's own session (doctor uses a session of its own), never theirs.
 */
export async function status(deps: Deps, caller: Caller): Promise<StatusResponse> {
  return deps.db.tx(async (tx) => {
    const rows = await tx.intent.findMany({
      where: { repoId: caller.repo.id, closedAt: null, session: { tokenId: caller.token.id } },
      include: { session: true, claim: { select: { paths: true } } },
      orderBy: { createdAt: "asc" },
    });
    const now = deps.clock();
    return {
      person: caller.token.person,
      intents: rows.map((r) => ({
        intentId: r.id, sessionKey: r.session.key, client: r.client, model: r.model, state: r.state,
        action: r.lastAction as StatusResponse["intents"][number]["action"], guard: guardStatus(r.session.lastSeenAt, now, deps.lease),
        control: r.session.control as StatusResponse["intents"][number]["control"], lastCallAt: r.session.lastSeenAt.toISOString(),
        objective: recordOf(r)?.objective ?? null, scope: parseJson<string[]>(r.claim?.paths, []),
      })),
    };
  });
}
