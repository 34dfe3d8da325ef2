import { realpathSync } from "node:fs";
import { BOUNDS } from "@cohent/protocol/bounds";
import { CohentError } from "@cohent/protocol/codes";
import type { CommitResponse, Envelope } from "@cohent/protocol";
import * as client from "../service/client.js";
import { commitOwn, partition } from "./commit.js";
import { readCredential } from "../state/config.js";
import { ok } from "../envelope.js";
import type { PeerScope } from "./peer-scopes.js";
import { postAgent } from "../service/http.js";
import type { SessionFile } from "../state/runtime.js";
import type { Inputs } from "../operations.js";

/**
 * The `commit` operation: asks the service for the active peers' scopes,
 * commits exactly the intent's own changed paths (commit.ts: a temporary
 * index, the peers' staged work left staged), and records the commit's hash
 * and paths as a checkpoint of the intent.
 *
 * Where it runs: like every adapter command the agent runs through its shell,
 * the PreToolUse hook performs it just before the command (the relay), outside
 * Codex's sandbox, with the network and a writable .git; the command then
 * prints the hook's answer. Run without a hook (a person's terminal), it runs
 * in the command's own process. Either way it needs the service first: without
 * the peers' scopes nothing is committed (the guard refuses shell commands
 * when the service is unreachable, too). A commit that landed but whose
 * checkpoint the service did not take is still reported as ok, with
 * recorded: false and a warning: the commit is in Git either way.
 */

/** The protocol's commit input (operation-inputs.ts): the message, and changed paths outside every scope to commit too (a path in a peer's scope is refused). */
export type CommitInput = Inputs["commit"];

/** The other live intents' scopes, from the service (one `scopes` read). Throws the service's failure. */
export async function activePeers(c: client.Checkout, s: SessionFile): Promise<PeerScope[]> {
  const env = await client.scopes(c, s);
  if (!env.ok) throw new CohentError(env.error.code as never, env.error.message, env.error.details);
  return env.data.peers;
}

/** Who the trailer names: the credential's person, else the service's answer for this token. */
async function personOf(c: client.Checkout, s: SessionFile): Promise<string> {
  const stored = readCredential(c.project)?.person;
  if (stored) return stored;
  const env = (await postAgent(client.connection(c, s.id), { type: "status" }).catch(
    () => null,
  )) as Envelope<{ person: string }> | null;
  return env?.ok ? env.data.person : "unknown";
}

export async function commitOperation(
  c: client.Checkout,
  s: SessionFile,
  input: CommitInput,
): Promise<Envelope<CommitResponse>> {
  const intentId = s.state.intentId;
  if (!intentId)
    throw new CohentError(
      "INVALID_INPUT",
      "This session has no work intent: publish a prompt or an intent first; a commit is recorded on it.",
    );
  const peers = await activePeers(c, s);
  const root = realpathSync(c.root);
  const scopes = { own: s.state.scope, peers };
  const [person, parts] = await Promise.all([personOf(c, s), partition(root, scopes, input.paths ?? [])]);
  const made = await commitOwn({
    ...scopes,
    root,
    message: input.message,
    intentId,
    person,
    client: s.state.client,
    ...(input.paths ? { paths: input.paths } : {}),
  });
  const subject = input.message.split("\n")[0]!.trim();
  const summary = `Committed ${made.hash.slice(0, 12)}: ${subject}`.slice(0, BOUNDS.summaryChars);
  const warnings: string[] = [];
  let recorded = false;
  if (made.paths.length <= BOUNDS.paths) {
    const cp = await client.checkpoint(c, s, {
      status: "working",
      summary,
      paths: made.paths,
      pathsSource: "repository-derived",
      commit: made.hash,
    });
    recorded = cp.ok;
    if (!cp.ok)
      warnings.push(
        `The commit landed, but the service did not record it on the intent (${cp.error.code}: ${cp.error.message}).`,
      );
  } else
    warnings.push(
      `The commit landed with ${made.paths.length} paths; a checkpoint carries at most ${BOUNDS.paths}, so it was not recorded on the intent.`,
    );
  const data: CommitResponse = {
    intentId,
    hash: made.hash,
    paths: made.paths,
    leftForPeers: parts.peers.map((p) => ({
      intentId: p.peer.intentId,
      person: p.peer.person,
      paths: p.paths,
    })),
    unclaimed: parts.unclaimed,
    recorded,
  };
  return ok("commit", data, {}, warnings);
}
