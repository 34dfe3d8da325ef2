import {
  BOUNDS,
  ControlRequest,
  redact,
  type GuardFilesDetail,
  type GuardRequest,
  type GuardResponse,
} from "@cohent/protocol";
import { Buckets } from "../../http/rate-limit.js";
import { newId } from "../../ids.js";
import type { Store } from "../../store/index.js";
import type { Caller, Deps } from "../deps.js";
import { freeText, shellCommandText } from "../shared/free-text.js";
import { ownHead } from "../shared/views.js";
import { baseStore } from "../../store/identity.js";

/** Who paused the session, as the change log and the Control Room name it. */
export const GUARD_ACTOR = "Cohent's guard";

const REASON_CHARS = ControlRequest.shape.reason.unwrap().maxLength!;
/** One path in the reason: its end (the file's name and folder) is what a person recognises. */
const PATH_IN_REASON = 120;

const clipStart = (text: string, max: number) => (text.length <= max ? text : `…${text.slice(-(max - 1))}`);

/** The session's pause reason: the files (as many as fit), whether they were put back, and who resumes it. */
export function guardFilesReason(files: GuardFilesDetail["files"], undone: boolean): string {
  const head = "This session's call changed Cohent's guard files (";
  const tail = `) — ${undone ? "undone" : "NOT undone: check them"}; a person must resume it in the Control Room.`;
  const items = files.map((f) => {
    const path = clipStart(f.path, PATH_IN_REASON);
    return f.change ? `${path}: ${f.change}` : path;
  });
  let listed = "";
  for (let i = 0; i < items.length; i++) {
    const next = listed ? `${listed}, ${items[i]}` : items[i]!;
    const rest = items.length - i - 1;
    const more = rest ? ` and ${rest} more` : "";
    if (head.length + next.length + more.length + tail.length > REASON_CHARS) {
      listed = `${listed || "…"} and ${items.length - i} more`;
      break;
    }
    listed = next;
  }
  return freeText(head + listed + tail, REASON_CHARS);
}

/** Per reporting session, in this instance's memory: the catches recorded. The pause itself is never limited. */
const limits = new WeakMap<Store, Buckets>();
function withinRate(store: Store, sessionId: string): boolean {
  let b = limits.get(baseStore(store));
  if (!b) {
    const perMinute = BOUNDS.shellWriteReportsPerMinute;
    limits.set(baseStore(store), (b = new Buckets({ perSecond: perMinute / 60, burst: perMinute })));
  }
  return b.take(sessionId) === 0;
}

/**
 * Guard report, kind `guard-files`: a call of the caller changed the guard's
 * own files (the checkout's wiring, or a client's user or machine settings
 * from which it reads its hooks or their switch), caught by its adapter after
 * the call and put back (`undone`) or not. In one transaction the catch is
 * recorded and the session is paused with the reason, as a person's pause
 * is: its next kill-switch read answers paused, its hook refuses every edit
 * and shell call, and the Control Room shows why, until a person resumes it.
 * A cancelled session stays cancelled. Past the shell-write rate a session's
 * catches are not recorded again, but it is still paused: a flood of reports
 * cannot buy a change of the guard's files a session that goes on.
 */
export async function guardFilesReport(
  deps: Deps,
  caller: Caller,
  req: GuardRequest,
): Promise<GuardResponse> {
  const files = (req.files ?? []).map((f) => ({
    path: freeText(f.path, BOUNDS.pathChars),
    change: f.change === undefined ? null : redact(f.change),
  }));
  const undone = req.undone === true;
  const reason = guardFilesReason(files, undone);
  const record = withinRate(deps.store, caller.session.id);
  const repoId = caller.repo.id;
  return deps.store.tx(
    async (t) => {
      if (req.intentId) await ownHead(t, caller, req.intentId, { open: false });
      await t.journal.lock(repoId);
      const at = deps.clock();
      if (record) {
        const detail: GuardFilesDetail = {
          command: shellCommandText(req.command),
          undone,
          files,
          person: caller.token.person,
          client: caller.session.client ?? caller.token.client,
          model: caller.session.model,
        };
        await t.journal.addGuardCatch({
          id: newId("gc"),
          repoId,
          intentId: req.intentId ?? "",
          agentId: caller.agentId ?? null,
          kind: "guard-files",
          paths: files.map((f) => f.path),
          peerIds: [],
          detail,
          at,
        });
      }
      const session = await t.sessions.get(caller.session.id);
      if (session && session.control !== "cancelled") {
        await t.sessions.setControl(session.id, "paused", reason);
        const openIds = await t.intents.openIdsOfSession(session.id);
        await t.journal.addEvent({
          repoId,
          intentId: openIds[0] ?? "",
          kind: "control",
          summary: `pause by ${GUARD_ACTOR}: its call changed the guard's files`,
          at,
        });
      }
      return { recorded: true };
    },
    { batch: repoId },
  );
}
