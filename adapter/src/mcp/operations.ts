import { BOUNDS, ERRORS } from "@cohent/protocol";
import * as client from "../client.js";
import { shownPacket } from "../commands.js";
import { ClientError, fail, failFrom, type Envelope } from "../envelope.js";
import { stagedPaths } from "../git.js";
import { recordUsage, type Surface } from "../usage.js";
import type { Inputs, Operation } from "./schemas.js";

/** `retryable` as the protocol defines it for the code (the lean adapter only knows its own codes). */
export function withProtocolFlags(env: Envelope): Envelope {
  const code = env.error?.code;
  if (code && code in ERRORS) env.error!.retryable = ERRORS[code as keyof typeof ERRORS].retryable;
  return env;
}

/** A failure envelope for anything thrown, with the protocol's retryable flag. */
export function failureOf(op: string, err: unknown): Envelope {
  return withProtocolFlags(failFrom(op, err));
}

/**
 * The one operation layer of the machine transports (agent CLI, MCP): a
 * validated request in, a protocol-v1 envelope out, never a throw. It calls
 * the same client operations as the hook and the CLI commands, with the same
 * runtime.json session state, so the transports differ only in how they
 * parse and render.
 */

export interface OperationContext {
  /** The bound repository top-level; it holds .cohent/project.json. */
  root: string;
  sessionId: string;
  /** Who calls: MCP clientInfo, COHENT_CLIENT, or what the hook recorded. */
  client: string | null;
  surface: Extract<Surface, "agent-cli" | "mcp">;
  signal?: AbortSignal;
  warnings?: string[];
}

export async function perform<K extends Operation>(op: K, input: Inputs[K], ctx: OperationContext): Promise<Envelope> {
  const started = performance.now();
  let env: Envelope;
  let repository: string | null = null;
  let model: string | null = null;
  try {
    const c: client.Checkout = { ...client.openCheckout(ctx.root), signal: ctx.signal };
    repository = c.project.repository;
    model = client.sessionState(ctx.root, ctx.sessionId).model;
    env = await run(op, input, c, ctx);
    if (ctx.signal?.aborted && env.error?.code !== "CANCELLED") env = fail(op, "CANCELLED", "The operation was cancelled.");
    const shown = shownPacket(env);
    if (shown && !ctx.signal?.aborted) {
      // The packet reaches the agent in this answer: acknowledge what it reads.
      await client.ack({ ...c, signal: undefined }, ctx.sessionId, shown.id, shown.text.length).catch(() => undefined);
    }
  } catch (err) {
    env = ctx.signal?.aborted || (err as Error)?.name === "AbortError" ? fail(op, "CANCELLED", "The operation was cancelled.") : failFrom(op, err);
  }
  env.operation = op;
  withProtocolFlags(env);
  if (ctx.warnings?.length) env.warnings = [...(env.warnings ?? []), ...ctx.warnings];
  recordUsage({
    op,
    surface: ctx.surface,
    client: ctx.client,
    model,
    ok: env.ok,
    code: env.error?.code,
    chars: shownPacket(env)?.text.length ?? 0,
    ms: performance.now() - started,
    repo: repository,
  });
  return env;
}

async function run<K extends Operation>(op: K, raw: Inputs[K], c: client.Checkout, ctx: OperationContext): Promise<Envelope> {
  switch (op) {
    case "publish": {
      const input = raw as Inputs["publish"];
      const s = client.sessionState(c.root, ctx.sessionId);
      return client.publish(c, ctx.sessionId, {
        prompt: input.prompt,
        client: s.client ?? ctx.client,
        model: s.model,
        paths: client.normalizeAll(c.root, input.paths ?? []),
      });
    }
    case "intent":
      return client.intent(c, ctx.sessionId, (raw as Inputs["intent"]).intent as unknown as Record<string, unknown>);
    case "scope": {
      const paths = client.normalizeAll(c.root, (raw as Inputs["scope"]).paths);
      const previous = client.sessionState(c.root, ctx.sessionId).scope;
      const env = await client.claim(c, ctx.sessionId, paths, true);
      if (!env.ok && env.error?.code === "SCOPE_CONFLICT") env.error.details = { ...(env.error.details as object), previousScope: previous };
      return env;
    }
    case "checkpoint": {
      const input = raw as Inputs["checkpoint"];
      let paths: string[] | undefined;
      let pathsSource: "provided-unverified" | "repository-derived" | undefined;
      if (input.source?.kind === "staged") {
        paths = await stagedPaths(c.root, ctx.signal);
        pathsSource = "repository-derived";
        if (paths.length > BOUNDS.paths) {
          throw new ClientError("INVALID_INPUT", `${paths.length} staged paths; a checkpoint carries at most ${BOUNDS.paths}. Pass source {kind:"paths"} with directory globs instead.`);
        }
      } else if (input.source?.kind === "paths") {
        paths = client.normalizeAll(c.root, input.source.paths);
        pathsSource = "provided-unverified";
      }
      return client.checkpoint(c, ctx.sessionId, { status: input.status, summary: input.summary ?? "", ...(paths ? { paths, pathsSource } : {}) });
    }
    case "context":
      return client.context(c, ctx.sessionId);
    default:
      throw new ClientError("INVALID_INPUT", `unknown operation ${String(op)}`);
  }
}
