import { BOUNDS, normalizeRepoPaths, type PublishRequest, type PublishResponse } from "@cohent/protocol";
import { leaseCutoff } from "../../core/lease.js";
import { PUBLISH_INSTRUCTION } from "../../core/render.js";
import { newId } from "../../ids.js";
import type { Caller, Deps } from "../deps.js";
import { closeIntent } from "../shared/claims.js";
import { publishText } from "../shared/free-text.js";
import { issuePacket } from "../shared/packets.js";
import { toPeerView } from "../shared/views.js";

/**
 * Publish: records the prompt as a new work intent in the `plan` state and
 * answers with the compact plan packet (goal, at most three recent active
 * peers, the instruction to publish a structured intent). A new prompt
 * supersedes the session's previous open intent and releases its scope.
 * `paths` are stored as hints shown to peers; they are not a claim.
 */
export async function publish(deps: Deps, caller: Caller, sent: PublishRequest): Promise<PublishResponse> {
  const req = publishText(sent);
  const promptPaths = normalizeRepoPaths(req.paths);
  const now = deps.clock();
  const { repo, session } = caller;
  return deps.store.tx(
    async (t) => {
      await t.journal.lock(repo.id);
      for (const id of await t.intents.openIdsOfSession(session.id))
        await closeIntent(t, deps, caller, id, "superseded", "superseded by a new prompt");

      const client = req.clientName ?? session.client ?? caller.token.client;
      const model = req.model ?? session.model;
      if (client !== session.client || model !== session.model)
        await t.sessions.setClient(session.id, client, model);
      const id = newId("wki");
      await t.intents.create({
        id,
        repoId: repo.id,
        sessionId: session.id,
        person: caller.token.person,
        client,
        model,
        prompt: req.prompt,
        promptPaths,
        at: now,
      });
      await t.journal.addEvent({
        repoId: repo.id,
        intentId: id,
        kind: "intent.published",
        summary: `${caller.token.person} published a prompt`,
        at: now,
      });

      // The newest first, one more than needed: this intent, just written, is likely among them.
      const peers = (await t.intents.recent(repo.id, leaseCutoff(now, deps.lease), BOUNDS.packetPeers + 1))
        .filter((i) => i.id !== id)
        .slice(0, BOUNDS.packetPeers)
        .map((i) => toPeerView(i, deps));
      const packet = await issuePacket(t, deps, caller, {
        kind: "plan",
        intentId: id,
        action: "plan",
        reason: "Prompt published.",
        goal: repo.goal || null,
        peers,
        decisions: [],
        changes: [],
        instruction: PUBLISH_INSTRUCTION,
      });
      return { intentId: id, action: "plan", packet };
    },
    { batch: caller.repo.id },
  );
}
