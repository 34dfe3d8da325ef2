import { readFileSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { BOUNDS, CohentError, zodDetails, type Envelope, type FailureEnvelope } from "@cohent/protocol";
import {
  findRoot,
  fail,
  failFrom,
  perform,
  type SessionFile,
  queuedUnwaited,
  cliSessionId,
  selectSession,
} from "@cohent/client";
import { bindRepository } from "./binding.js";
import { INPUTS, isOperation, OPERATIONS, operationSchema, type Operation } from "./schemas.js";

/**
 * `agent <op> --input <file|-> [--repo DIR]` and `agent schema --task <op>`:
 * one JSON request in, exactly one protocol-v1 envelope on stdout, nothing
 * else there. Exit 0 on ok, 1 on a failure, 130 on SIGINT (CANCELLED).
 */

/** The largest request read: the service accepts no larger body. */
export const MAX_INPUT_BYTES = BOUNDS.bodyBytes;

export const AGENT_USAGE = `usage: node .cohent/cohent.mjs agent <${OPERATIONS.join("|")}> [--input <file|->] [--repo DIR]
       node .cohent/cohent.mjs agent schema --task <${OPERATIONS.join("|")}>`;

function flags(args: readonly string[], known: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf("=");
    const name = a.startsWith("--") && eq !== -1 ? a.slice(0, eq) : a;
    if (!known.includes(name))
      throw new CohentError("INVALID_INPUT", `unknown argument ${JSON.stringify(a)}; ${AGENT_USAGE}`);
    const value = eq !== -1 && a.startsWith("--") ? a.slice(eq + 1) : args[++i];
    if (value === undefined) throw new CohentError("INVALID_INPUT", `${name} needs a value; ${AGENT_USAGE}`);
    out[name] = value;
  }
  return out;
}

/** Reads at most MAX_INPUT_BYTES + 1 bytes; more is PAYLOAD_TOO_LARGE. Resolves null on abort. */
function readInput(source: string, signal: AbortSignal): Promise<string | null> {
  const tooLarge = () =>
    new CohentError("PAYLOAD_TOO_LARGE", `The request is larger than ${MAX_INPUT_BYTES} bytes.`);
  if (source !== "-") {
    let buf: Buffer;
    try {
      buf = readFileSync(source);
    } catch (err) {
      throw new CohentError(
        "INVALID_INPUT",
        `Cannot read --input ${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
      );
    }
    if (buf.length > MAX_INPUT_BYTES) throw tooLarge();
    return Promise.resolve(buf.toString("utf8"));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      process.stdin.off("data", onData);
      process.stdin.off("end", onEnd);
      process.stdin.off("error", onError);
      signal.removeEventListener("abort", onAbort);
      process.stdin.pause();
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > MAX_INPUT_BYTES) {
        stop();
        process.stdin.destroy();
        reject(tooLarge());
      } else chunks.push(c);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const onError = (err: Error) => {
      stop();
      reject(new CohentError("INVALID_INPUT", `Cannot read stdin: ${err.message}.`));
    };
    const onAbort = () => {
      stop();
      resolve(null);
    };
    process.stdin.on("data", onData);
    process.stdin.on("end", onEnd);
    process.stdin.on("error", onError);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export interface AgentOptions {
  scriptUrl: string;
  /** The session a PreToolUse hook bound this command to (its relay), if any. */
  relaySession?: string | null;
  /** The answer the hook already obtained for this very command (the sandbox relay), if any. */
  relayed?: { envelope: Envelope<any> } | null;
  /** Where a relative --input resolves (the command's directory, when the hook runs it). */
  cwd?: string;
  out?: (s: string) => void;
}

/** One request: flags, input, schema, repository, session, then the operation layer. Throws on a bad request. */
async function request(
  op: Operation,
  rest: readonly string[],
  o: {
    scriptUrl: string;
    cwd?: string;
    signal: AbortSignal;
    sessionId?: string | null;
    session?: SessionFile;
    /** The PreToolUse hook performs this for a sandboxed command: nothing may block past its budget. */
    relayed?: boolean;
    /** The hook queued this `scope` with `wait` without waiting: this process waits, if it can reach the service. */
    queuedByRelay?: FailureEnvelope;
  },
): Promise<Envelope<any>> {
  const f = flags(rest, ["--input", "--repo"]);
  const source =
    f["--input"] === undefined || f["--input"] === "-"
      ? f["--input"]
      : resolvePath(o.cwd ?? process.cwd(), f["--input"]);
  const text = source === undefined ? "{}" : await readInput(source, o.signal);
  if (text === null || o.signal.aborted) return fail(op, "CANCELLED", "Interrupted.");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CohentError("INVALID_JSON", `The request is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = INPUTS[op].safeParse(json);
  if (!parsed.success)
    throw new CohentError(
      "INVALID_INPUT",
      "The request does not match protocol version 1; print the schema with agent schema --task " + op + ".",
      zodDetails(parsed.error),
    );
  const input = parsed.data as { repo?: string };
  const root = bindRepository(
    f["--repo"] ?? input.repo ?? findRoot(process.cwd(), o.scriptUrl) ?? process.cwd(),
  );
  // The hook performs a relayed command for its own session in its own checkout: no argument moves it to
  // another checkout (that checkout's credential, a session the kill switch of this one does not hold).
  if (o.relayed && o.session && root !== o.session.root && root !== bindRepository(o.session.root))
    throw new CohentError(
      "REPOSITORY_MISMATCH",
      `The hook performs this command for its session in ${o.session.root}, not in ${root}: run it there without --repo or repo.`,
    );
  const session = o.session?.root === root ? o.session : undefined;
  const sessionId =
    session?.id ??
    o.sessionId ??
    selectSession(root, { own: cliSessionId(), onAmbiguity: "refuse" }).sessionId;
  const data = o.queuedByRelay ? { ...(parsed.data as object), queuedByRelay: o.queuedByRelay } : parsed.data;
  return perform(op, data, {
    root,
    sessionId,
    client: process.env.COHENT_CLIENT?.trim() || null,
    surface: "agent-cli",
    signal: o.signal,
    ...(session ? { session } : {}),
    ...(o.relayed ? { relayed: true } : {}),
  });
}

/** The hook's relay of a sandboxed `agent` command: the same request, for the session the hook holds. */
export async function agentOutcome(
  argv: readonly string[],
  o: { scriptUrl: string; session: SessionFile; cwd: string },
): Promise<{ envelope: Envelope<any>; exitCode: number }> {
  const [sub, ...rest] = argv;
  let envelope: Envelope<any>;
  try {
    if (!isOperation(sub))
      throw new CohentError("INVALID_INPUT", `unknown operation ${JSON.stringify(sub)}; ${AGENT_USAGE}`);
    envelope = await request(sub, rest, {
      ...o,
      sessionId: o.session.id,
      signal: new AbortController().signal,
      relayed: true,
    });
  } catch (err) {
    envelope = failFrom(isOperation(sub) ? sub : "agent", err);
  }
  return { envelope, exitCode: envelope.ok ? 0 : 1 };
}

export async function agentMain(argv: readonly string[], opts: AgentOptions): Promise<number> {
  const out = opts.out ?? ((s: string) => void process.stdout.write(s + "\n"));
  const [sub, ...rest] = argv;
  const controller = new AbortController();
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  let printed = false;
  const emit = (env: Envelope<any>): number => {
    if (!printed) out(JSON.stringify(env));
    printed = true;
    if (interrupted) return 130;
    return env.ok ? 0 : 1;
  };
  // A cancelled operation settles promptly; this bounds the wait if one does not.
  const cancelled = new Promise<Envelope<any>>((resolve) =>
    controller.signal.addEventListener(
      "abort",
      () => setTimeout(() => resolve(fail(sub ?? "agent", "CANCELLED", "Interrupted.")), 2_000).unref(),
      { once: true },
    ),
  );
  try {
    if (sub === "schema") {
      const f = flags(rest, ["--task"]);
      if (!isOperation(f["--task"]))
        throw new CohentError("INVALID_INPUT", `--task takes one of ${OPERATIONS.join(", ")}`);
      out(JSON.stringify(operationSchema(f["--task"] as Operation)));
      printed = true;
      return 0;
    }
    if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
      process.stderr.write(AGENT_USAGE + "\n");
      return sub === undefined ? 1 : 0;
    }
    if (!isOperation(sub))
      throw new CohentError("INVALID_INPUT", `unknown operation ${JSON.stringify(sub)}; ${AGENT_USAGE}`);
    // Under Codex's network-less sandbox the PreToolUse hook ran this command already.
    const relayed = opts.relayed?.envelope;
    const resume = sub === "scope" && queuedUnwaited(relayed) ? relayed : undefined;
    if (relayed && !resume && (relayed.ok || relayed.error.code !== "CONTROL_PLANE_UNREACHABLE"))
      return emit(relayed);
    const env = await Promise.race([
      request(sub, rest, {
        scriptUrl: opts.scriptUrl,
        cwd: opts.cwd,
        signal: controller.signal,
        sessionId: opts.relaySession,
        ...(resume ? { queuedByRelay: resume } : {}),
      }),
      cancelled,
    ]);
    return emit(env);
  } catch (err) {
    return emit(
      controller.signal.aborted
        ? fail(sub ?? "agent", "CANCELLED", "Interrupted.")
        : failFrom(isOperation(sub) ? sub : "agent", err),
    );
  } finally {
    process.off("SIGINT", onSigint);
  }
}
