import { BOUNDS, normalizeRepoPaths, type PublishRequest, type PublishResponse } from "@cohent/protocol";
import { newId } from "../ids.js";
import { PUBLISH_INSTRUCTION } from "../render.js";
import type { Caller, Deps } from "./deps.js";
import { closeIntent } from "./claims.js";
import { addEvent, issuePacket, lockRepository } from "./journal.js";
import { toJson } from "./json.js";
import { loadActiveIntents, toPeerView } from "./views.js";

/**
 * Publish: records the prompt as a new work intent in the `plan` state and
 * answers with the compact plan packet (goal, at most three recent active
 * peers, the instruction to publish a structured intent). A new prompt
 * supersedes the session's previous open intent and releases its scope.
 * `paths` are stored as hints shown to peers; they are not a claim.
 */
export async function publish(deps: Deps, caller: Caller, req: PublishRequest): Promise<PublishResponse> {
  const paths = normalizeRepoPaths(req.paths);
  const now = deps.clock();
  return deps.db.tx(async (tx) => {
    await lockRepository(tx, caller.repo.id);
    const previous = await tx.intent.findMany({ where: { sessionId: caller.session.id, closedAt: null }, select: { id: true } });
    for (const p of previous) await closeIntent(tx, deps, caller, p.id, "superseded", "superseded by a new prompt");

    const client = req.clientName ?? caller.session.client ?? caller.token.client;
    const model = req.model ?? caller.session.model;
    if (client !== caller.session.client || model !== caller.session.model) {
      await tx.session.update({ where: { id: caller.session.id }, data: { client, model } });
    }
    const id = newId("wki");
    await tx.intent.create({
      data: {
        id, repoId: caller.repo.id, sessionId: caller.session.id, person: caller.token.person, client, model,
        prompt: req.prompt, promptPaths: toJson(paths), createdAt: now, updatedAt: now,
      },
    });
    await addEvent(tx, deps, { repoId: caller.repo.id, intentId: id, kind: "intent.published", summary: `${caller.token.person} published a prompt` });

    const peers = (await loadActiveIntents(tx, deps, caller.repo.id))
      .filter((i) => i.id !== id)
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())
      .slice(0, BOUNDS.packetPeers)
      .map((i) => toPeerView(i, deps));
    const packet = await issuePacket(tx, deps, caller, {
      kind: "plan", intentId: id, action: "plan", reason: "Prompt published.", goal: caller.repo.goal || null,
      peers, decisions: [], changes: [], instruction: PUBLISH_INSTRUCTION,
    });
    return { intentId: id, action: "plan", packet };
  });
}
