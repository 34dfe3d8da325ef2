import {
  BOUNDS,
  CohentError,
  normalizeRepoPaths,
  redact,
  type GuardRequest,
  type GuardResponse,
} from "@cohent/protocol";
import { newId } from "../../ids.js";
import type { Caller, Deps } from "../deps.js";
import { ownHead } from "../shared/views.js";
import { guardFilesReport } from "./guard-files.js";
import { shellWriteReport } from "./shell-write.js";

/**
 * Guard report: records a refusal the adapter made on its own (outside-scope
 * writes, edits before an intent, …) with the rule that made it, or, kind `wiring`, the state of the
 * checkout's guard wiring as its adapter found it at a session start: the
 * Control Room shows "guard wiring modified" for that checkout (the token
 * and the checkout id it sends) until a report from it finds it intact.
 * Kind `shell-write` (a write caught after the call) also tells the peers it
 * wrote over: shell-write.ts. Kind `guard-files` (a call changed the guard's
 * own files) pauses the session: guard-files.ts.
 */
export async function guardReport(deps: Deps, caller: Caller, req: GuardRequest): Promise<GuardResponse> {
  if (req.kind === "wiring") {
    const wiring = req.wiring!;
    return deps.store.tx(
      async (t) => {
        // Each alarm is a line in the Control Room: a token cannot fill it with made-up checkouts.
        if (wiring.changes.length) {
          const open = await t.wiring.openOf(caller.token.id, wiring.checkout);
          if (!open.includes && open.count >= BOUNDS.wiringCheckouts)
            throw new CohentError(
              "INVALID_INPUT",
              `This token already has ${BOUNDS.wiringCheckouts} checkouts reported as guard wiring modified; repair one (cohent init --upgrade) before another is reported.`,
            );
        }
        // The session belongs to this checkout: its alarm, while open, makes the session advisory (core/enforcement).
        await t.sessions.setCheckout(caller.session.id, wiring.checkout);
        await t.wiring.report({
          newId: () => newId("wir"),
          repoId: caller.repo.id,
          tokenId: caller.token.id,
          checkout: wiring.checkout,
          sessionId: caller.session.id,
          // Validated by the schema (bounded, a plain character set); redacted like all peer text.
          changes: wiring.changes.map((c) => ({ file: redact(c.file), change: redact(c.change) })),
          at: deps.clock(),
        });
        return { recorded: true };
      },
      { batch: caller.repo.id },
    );
  }
  if (req.kind === "shell-write") return shellWriteReport(deps, caller, req);
  if (req.kind === "guard-files") return guardFilesReport(deps, caller, req);
  const paths = normalizeRepoPaths(req.paths);
  return deps.store.tx(
    async (t) => {
      if (req.intentId) await ownHead(t, caller, req.intentId, { open: false });
      await t.journal.addGuardCatch({
        id: newId("gc"),
        repoId: caller.repo.id,
        intentId: req.intentId ?? "",
        agentId: caller.agentId ?? null,
        kind: req.kind,
        paths,
        peerIds: [],
        // The rule that refused (validated: a short slug), for the Control Room's refusals by rule.
        detail: req.rule ? { rule: req.rule } : null,
        at: deps.clock(),
      });
      return { recorded: true };
    },
    { batch: caller.repo.id },
  );
}
