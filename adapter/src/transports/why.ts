import {
  findRoot,
  fail,
  failFrom,
  ok,
  readRuntime,
  type Refusal,
  cliSessionId,
  selectSession,
} from "@cohent/client";
import type { Envelope } from "@cohent/protocol";
import { claimRelay } from "./relay.js";

/**
 * `why`: this session's last refusals, newest last: the rule that refused
 * (adapter/src/guard/rules.ts), the facts it read, what to do, and the
 * reason as the model read it. Local: it reads runtime.json, where the
 * guard keeps them (act.ts). The session is the one whose hook saw the
 * command (relay.ts), else the one live session of the checkout.
 */

export function whyEnvelope(
  argv: readonly string[],
  cwd = process.cwd(),
  scriptUrl?: string,
  env: NodeJS.ProcessEnv = process.env,
): Envelope<any> {
  const root = findRoot(cwd, scriptUrl);
  if (!root)
    return fail(
      "why",
      "NOT_CONFIGURED",
      "No .cohent/project.json here or above; run npx cohent init --server URL.",
    );
  try {
    const sessionId =
      claimRelay(root, argv)?.sessionId ??
      selectSession(root, { own: cliSessionId(env), onAmbiguity: "refuse" }, env).sessionId;
    const refusals = readRuntime(root).sessions[sessionId]?.refusals ?? [];
    return ok("why", { sessionId, refusals });
  } catch (err) {
    return failFrom("why", err);
  }
}

function one(r: Refusal, i: number): string {
  const facts = Object.entries(r.facts).map(([k, v]) => `    ${k}: ${v}`);
  return [
    `${i + 1}. ${r.at}  ${r.tool} refused by rule ${r.rule} (${r.code})`,
    ...(facts.length ? ["  facts it read:", ...facts] : []),
    `  what to do: ${r.todo}`,
    `  reason: ${r.reason.replace(/\n+/g, " ")}`,
  ].join("\n");
}

export function whyText(envelope: Envelope<any>): string {
  if (!envelope.ok) return `cohent why: ${envelope.error.message}`;
  const { sessionId, refusals } = envelope.data as { sessionId: string; refusals: Refusal[] };
  if (refusals.length === 0) return `No refusal kept for session ${sessionId}.`;
  return [`The last refusals of session ${sessionId}, newest last:`, ...refusals.map(one)].join("\n\n");
}
