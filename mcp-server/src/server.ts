import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { CohentError } from "@cohent/protocol";
import { findRoot, readProject, perform, mcpSessionId, selectSession } from "@cohent/client";
import { HOOK_TOOL, hookTool, type HookRunner } from "./hook-tool.js";
import { bindRepository, checkRepo, insideRoots } from "./binding.js";
import { OPERATIONS } from "./schemas.js";
import { INSTRUCTIONS, SERVER_INFO, SERVER_VERSION, serveTools } from "./tools.js";

/**
 * `mcp [--repo DIR]`: the stdio MCP server. stdout carries MCP messages
 * only; everything else goes to stderr. A thin transport over the shared
 * tool table (tools.ts): it checks the repository binding and the client's
 * roots, and hands the request to the same operation layer as the agent CLI.
 */

export { SERVER_VERSION, toolList } from "./tools.js";

export async function mcpMain(
  argv: readonly string[],
  opts: {
    scriptUrl: string;
    /** The adapter's hook, run in this process: the guard's `hook` tool. */ hook?: HookRunner;
  },
): Promise<number> {
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

  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
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

  const guard = opts.hook
    ? hookTool({ root: bound, run: opts.hook, client: () => server.getClientVersion() })
    : undefined;
  guard?.close();
  serveTools(
    server,
    OPERATIONS,
    async (op, input, signal) => {
      checkRepo(bound, input.repo);
      const refused = await checkRoots();
      if (refused) throw refused;
      session.own ||= mcpSessionId(clientName());
      const picked = selectSession(bound, {
        client: clientName(),
        own: session.own,
        sticky: session,
        onAmbiguity: "own",
      });
      return perform(op, input, {
        root: bound,
        sessionId: picked.sessionId,
        client: clientName(),
        surface: "mcp",
        signal,
        ...(picked.warning ? { warnings: [picked.warning] } : {}),
      });
    },
    guard && { name: HOOK_TOOL, call: (args) => guard.call(args) },
  );

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
  guard?.close();
  await server.close().catch(() => undefined);
  return 0;
}
