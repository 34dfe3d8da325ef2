import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { CohentError, zodDetails, type Envelope } from "@cohent/protocol";
import { findRoot, readProject } from "@cohent/adapter/state/config.js";
import { fail, failFrom } from "@cohent/adapter/envelope.js";
import { perform } from "@cohent/adapter/operations.js";
import { mcpSessionId, selectSession } from "@cohent/adapter/state/session.js";
import { bindRepository, checkRepo, insideRoots } from "./binding.js";
import { isOperation, MCP_INPUTS, McpOutput, OPERATIONS, toolSchemas, type Operation } from "./schemas.js";

/**
 * `mcp [--repo DIR]`: the stdio MCP server. stdout carries MCP messages
 * only; everything else goes to stderr. A thin transport: it validates with
 * the operation's zod schema, checks the repository binding and the client's
 * roots, and hands the request to the same operation layer as the agent CLI.
 */

export const SERVER_VERSION = "0.1.0";

const DESCRIPTIONS: Record<Operation, string> = {
  publish: "Publish the user's prompt as your new work intent; returns the plan packet.",
  intent:
    "Declare your intent before editing; names match [A-Za-z0-9][A-Za-z0-9._:/@+-]*. action: proceed, parallel, wait, duplicate or handoff.",
  scope: "Claim the paths you will write. SCOPE_CONFLICT names the peer and, with queue, your place.",
  checkpoint: "Report progress, a block or the end of your work.",
  context: "The brief: goal, your latest decision, active peers.",
  commit: "Commit your scope's changes only, never a peer's; recorded on your intent.",
  "request-release": "Ask the holders of paths to let go; your note reaches them.",
};

/** tools/list: names, one-line descriptions, annotations and the generated schemas. */
export function toolList(): Tool[] {
  return OPERATIONS.map((op) => ({
    name: op,
    description: DESCRIPTIONS[op],
    ...toolSchemas(op),
    // Every tool talks to the remote Cohent service: open world. None deletes anything.
    annotations:
      op === "context"
        ? { readOnlyHint: true, idempotentHint: true, openWorldHint: true }
        : { destructiveHint: false, openWorldHint: true },
  })) as Tool[];
}

function result(env: Envelope<unknown>): CallToolResult {
  const structured = McpOutput.parse(env) as Record<string, unknown>;
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
    ...(env.ok ? {} : { isError: true }),
  };
}

export async function mcpMain(argv: readonly string[], opts: { scriptUrl: string }): Promise<number> {
  // stdout belongs to the protocol: a stray console.log must not corrupt it.
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  let repoArg: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--repo") repoArg = argv[++i];
    else if (a.startsWith("--repo=")) repoArg = a.slice(7);
    else {
      process.stderr.write(
        `cohent mcp: unknown argument ${a}\nusage: node .cohent/cohent.mjs mcp [--repo DIR]\n`,
      );
      return 1;
    }
  }
  let bound: string;
  try {
    bound = bindRepository(repoArg ?? findRoot(process.cwd(), opts.scriptUrl) ?? process.cwd());
  } catch (err) {
    process.stderr.write(`cohent mcp: ${(err as Error).message}\n`);
    return 1;
  }
  let service = "(not configured: no .cohent/project.json)";
  try {
    service = readProject(bound).service;
  } catch {
    /* every call answers NOT_CONFIGURED */
  }

  const server = new Server(
    { name: "cohent", version: SERVER_VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        "Cohent coordinates the coding agents working in this repository. Call intent before your first edit, scope before writing where a tool cannot tell, checkpoint when your plan changes or you finish. Every tool answers one envelope: version, ok, operation, data (on success) or error {code, message, retryable, details}, warnings, meta.",
    },
  );
  const tools = toolList();
  const session = { bound: null as string | null, own: "" };
  let roots: Promise<CohentError | null> | null = null;

  const clientName = () => {
    const v = server.getClientVersion();
    return v ? v.title || v.name : null;
  };

  /** The roots check, cached until the client says its roots changed. */
  const checkRoots = (): Promise<CohentError | null> => {
    if (!server.getClientCapabilities()?.roots) return Promise.resolve(null);
    roots ??= server.listRoots(undefined, { timeout: 10_000 }).then(
      ({ roots: list }) =>
        insideRoots(bound, list)
          ? null
          : new CohentError(
              "REPOSITORY_OUTSIDE_ROOT",
              `This server's repository ${bound} is outside the client's roots (${list.map((r) => r.uri).join(", ") || "none"}). Add it to the client's workspace roots, or start a server for a repository inside them.`,
            ),
      (err: Error) => {
        roots = null;
        return new CohentError(
          "REPOSITORY_OUTSIDE_ROOT",
          `The client advertises roots but did not list them (${err.message}); the repository cannot be checked against them.`,
        );
      },
    );
    return roots;
  };

  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    roots = null;
    const refused = await checkRoots();
    if (refused) process.stderr.write(`cohent mcp: ${refused.message}\n`);
  });
  server.oninitialized = () => {
    session.own = mcpSessionId(clientName());
    void checkRoots().then((refused) => refused && process.stderr.write(`cohent mcp: ${refused.message}\n`));
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const op = isOperation(name) ? name : null;
    try {
      if (!op)
        throw new CohentError(
          "INVALID_INPUT",
          `No tool ${JSON.stringify(name)}; the tools are ${OPERATIONS.join(", ")}.`,
        );
      const parsed = MCP_INPUTS[op].safeParse(request.params.arguments ?? {});
      if (!parsed.success)
        throw new CohentError(
          "INVALID_INPUT",
          "The arguments do not match the tool's input schema.",
          zodDetails(parsed.error),
        );
      checkRepo(bound, (parsed.data as { repo?: string }).repo);
      const refused = await checkRoots();
      if (refused) throw refused;
      session.own ||= mcpSessionId(clientName());
      const picked = selectSession(bound, {
        client: clientName(),
        own: session.own,
        sticky: session,
        onAmbiguity: "own",
      });
      const env = await perform(op, parsed.data, {
        root: bound,
        sessionId: picked.sessionId,
        client: clientName(),
        surface: "mcp",
        signal: extra.signal,
        ...(picked.warning ? { warnings: [picked.warning] } : {}),
      });
      return result(env);
    } catch (err) {
      return result(
        extra.signal.aborted
          ? fail(op ?? name, "CANCELLED", "The operation was cancelled.")
          : failFrom(op ?? name, err),
      );
    }
  });

  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  process.stderr.write(
    `cohent mcp ${SERVER_VERSION}: bound to ${bound}; service ${service}; tools ${OPERATIONS.join(", ")}\n`,
  );
  await closed;
  await server.close().catch(() => undefined);
  return 0;
}
