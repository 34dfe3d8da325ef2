import { BOUNDS } from "@cohent/protocol/bounds";
import { CohentError } from "@cohent/protocol/codes";
import { normalizeRepoPaths } from "@cohent/protocol/paths";
import { OPERATIONS, isOperation, type Operation } from "@cohent/protocol/operations";
import type { Envelope, FailureEnvelope, OperationInputs } from "@cohent/protocol";
import * as client from "./service/client.js";
import { commitOperation } from "./git/commit-op.js";
import { fail, failFrom, withProtocolFlags } from "./envelope.js";
import { stagedPaths } from "./git/git.js";
import { SessionFile } from "./state/runtime.js";
import { stillQueued, waitForGrant } from "./scope-wait.js";
import { recordUsage, type Surface } from "./state/usage.js";

/**
 * The one client-side operation layer. Every transport (the hook, the human
 * CLI, the JSON agent CLI, MCP) parses its request into an operation and an
 * input, calls perform(), and renders the envelope it gets back. perform
 * dispatches, acknowledges the packet the answer shows the agent, records
 * the usage row, and saves the session's state once. It never throws.
 */

export { OPERATIONS, isOperation, type Operation };

/** An operation's input as the protocol defines it (operation-inputs.ts), without the request's envelope fields. */
type Input<K extends Operation> = Omit<OperationInputs[K], "version" | "repo">;

/** What perform takes: the protocol's inputs, and what only the adapter's own transports add. */
export interface Inputs {
  /** The hook names the client and model it recorded. */
  publish: Input<"publish"> & { client?: string | null; model?: string | null };
  intent: Input<"intent">;
  /** `queue` joins the claim queue on a collision; `wait` (seconds, implies queue) then blocks until granted. */
  scope: Input<"scope"> & {
    /**
     * The queued refusal the PreToolUse hook got for this very command (the
     * relay cannot wait): the command then waits itself, where it can reach
     * the service. Internal: no transport's schema accepts it.
     */
    queuedByRelay?: FailureEnvelope;
  };
  checkpoint: Input<"checkpoint">;
  context: Input<"context">;
  commit: Input<"commit">;
  "request-release": Input<"request-release">;
}

export interface OperationContext {
  /** The checkout root; it holds .cohent/project.json. */
  root: string;
  sessionId: string;
  /** Who calls: MCP clientInfo, COHENT_CLIENT, or what the hook recorded. */
  client?: string | null;
  /** Who renders the answer; the hook records its own row per event, so "hook" records none here. */
  surface: Surface;
  signal?: AbortSignal;
  warnings?: string[];
  /** The caller's session file, when it saves runtime.json itself (the hook's relay): perform then does not. */
  session?: SessionFile;
  /** Performed by the PreToolUse hook for a sandboxed command (relay.ts): nothing may block past the hook's budget. */
  relayed?: boolean;
  /**
   * The checkout as the caller opened it. With `remote` (the backend's /mcp endpoint) there is no
   * checkout on this machine: its root is "", its calls go to `checkout.send`, no usage row is
   * written here, and what needs the agent's Git (a staged checkpoint, commit) is refused.
   */
  checkout?: client.Checkout;
  remote?: boolean;
}

/** The packet an answer shows the agent, for the acknowledgement of injected characters. */
export function shownPacket(env: Envelope<any>): { id: string; text: string } | null {
  const p = env.ok ? env.data?.packet : null;
  return p && typeof p.id === "string" && typeof p.text === "string" ? { id: p.id, text: p.text } : null;
}

export async function perform<K extends Operation>(
  op: K,
  input: Inputs[K],
  ctx: OperationContext,
): Promise<Envelope<any>> {
  const started = performance.now();
  let env: Envelope<any>;
  let repository: string | null = null;
  const s = ctx.session ?? new SessionFile(ctx.root, ctx.sessionId);
  try {
    const c: client.Checkout = { ...(ctx.checkout ?? client.openCheckout(ctx.root)), signal: ctx.signal };
    if (ctx.remote) refuseRemote(op, input);
    repository = c.project.repository;
    env = await dispatch(op, input, c, s, ctx);
    if (ctx.signal?.aborted && !(!env.ok && env.error.code === "CANCELLED"))
      env = fail(op, "CANCELLED", "The operation was cancelled.");
    const shown = shownPacket(env);
    // The packet reaches the agent in this answer: acknowledge what it reads.
    if (shown && !ctx.signal?.aborted) await client.ack(c, s.id, shown.id, shown.text.length);
  } catch (err) {
    env =
      ctx.signal?.aborted || (err as Error)?.name === "AbortError"
        ? fail(op, "CANCELLED", "The operation was cancelled.")
        : failFrom(op, err);
  }
  if (!ctx.session) {
    try {
      s.save();
    } catch (err) {
      if (env.ok) env = failFrom(op, err);
    }
  }
  env.operation = op;
  withProtocolFlags(env);
  if (ctx.warnings?.length) env.warnings = [...(env.warnings ?? []), ...ctx.warnings];
  if (ctx.surface !== "hook" && !ctx.remote) {
    const row = {
      op,
      surface: ctx.surface,
      client: ctx.client ?? s.state.client,
      model: s.state.model,
      ok: env.ok,
      chars: shownPacket(env)?.text.length ?? 0,
    };
    recordUsage({
      ...row,
      code: env.ok ? undefined : env.error.code,
      ms: performance.now() - started,
      repo: repository,
    });
  }
  return env;
}

/** What only the agent's own checkout can do: a remote agent runs Git itself and sends paths. */
function refuseRemote(op: Operation, input: unknown): void {
  if (op === "commit")
    throw new CohentError(
      "INVALID_INPUT",
      "commit needs the agent's checkout; over /mcp, commit with your own Git and checkpoint the paths.",
    );
  if (op === "checkpoint" && (input as Inputs["checkpoint"]).source?.kind === "staged")
    throw new CohentError(
      "INVALID_INPUT",
      'source {kind:"staged"} reads the agent\'s checkout, which this server does not have; send source {kind:"paths", paths:[…]} instead.',
    );
}

async function dispatch<K extends Operation>(
  op: K,
  raw: Inputs[K],
  c: client.Checkout,
  s: SessionFile,
  ctx: OperationContext,
): Promise<Envelope<any>> {
  const paths = (list: readonly string[] | undefined) => normalizeRepoPaths(list ?? [], c.root);
  switch (op) {
    case "publish": {
      const input = raw as Inputs["publish"];
      const who = {
        client: input.client ?? s.state.client ?? ctx.client ?? null,
        model: input.model ?? s.state.model,
      };
      return client.publish(c, s, { prompt: input.prompt, ...who, paths: paths(input.paths) });
    }
    case "intent":
      return client.intent(c, s, (raw as Inputs["intent"]).intent);
    case "scope": {
      const input = raw as Inputs["scope"];
      const previous = s.state.scope;
      const wanted = paths(input.paths);
      if (input.queuedByRelay && input.wait) {
        const waited = await waitForGrant(c, s, input.queuedByRelay, input.wait, wanted, previous);
        // No network here either (Codex's sandbox): the relay's answer stands.
        return !waited.ok && waited.error.code === "CONTROL_PLANE_UNREACHABLE" ? input.queuedByRelay : waited;
      }
      const queue = !!input.queue || !!input.wait;
      const env = await client.claim(c, s, wanted, true, queue);
      if (env.ok || env.error.code !== "SCOPE_CONFLICT") return env;
      // A refused scope leaves the previous claim in place: say which it is.
      env.error.details = { ...(env.error.details as object), previousScope: previous, requested: wanted };
      if (!input.wait || !client.queuePlace(env.error.details)) return env;
      if (ctx.relayed) return stillQueued(env, { seconds: input.wait, waited: false });
      return waitForGrant(c, s, env, input.wait, wanted, previous);
    }
    case "request-release": {
      const input = raw as Inputs["request-release"];
      return client.releaseRequest(c, s, paths(input.paths), input.note ?? "");
    }
    case "checkpoint": {
      const input = raw as Inputs["checkpoint"];
      const out: client.CheckpointInput = { status: input.status, summary: input.summary ?? "" };
      if (input.source?.kind === "staged") {
        out.paths = await stagedPaths(c.root, ctx.signal);
        out.pathsSource = "repository-derived";
        if (out.paths.length > BOUNDS.paths) {
          throw new CohentError(
            "INVALID_INPUT",
            `${out.paths.length} staged paths; a checkpoint carries at most ${BOUNDS.paths}. Pass source {kind:"paths"} with directory globs instead.`,
          );
        }
      } else if (input.source?.kind === "paths") {
        out.paths = paths(input.source.paths);
        out.pathsSource = "provided-unverified";
      }
      return client.checkpoint(c, s, out);
    }
    case "context":
      return client.context(c, s);
    case "commit":
      return commitOperation(c, s, raw as Inputs["commit"]);
    default:
      throw new CohentError("INVALID_INPUT", `unknown operation ${String(op)}`);
  }
}
