import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { CohentError, zodDetails, type Envelope } from "@cohent/protocol";
import { COHENT_VERSION } from "@cohent/protocol/version";
import { fail, failFrom } from "@cohent/client";
import {
  isOperation,
  MCP_INPUTS,
  McpOutput,
  OPERATIONS,
  toolSchemas,
  type McpInputs,
  type Operation,
} from "./schemas.js";

/**
 * The MCP tool table, once, for both servers: the stdio server (server.ts)
 * and the backend's Streamable HTTP endpoint (/mcp). Names, descriptions,
 * annotations, the generated schemas, the instructions, argument validation
 * and the rendering of an envelope as a tool result live here; a server
 * supplies only how a validated call reaches the operation layer.
 */

/** The product version (protocol/src/version.ts), under the name the MCP handshake gives it. */
export const SERVER_VERSION = COHENT_VERSION;
export const SERVER_INFO = { name: "cohent", version: SERVER_VERSION } as const;

export const INSTRUCTIONS =
  "Cohent coordinates the coding agents working in this repository. Call intent before your first edit, scope before writing where a tool cannot tell, checkpoint when your plan changes or you finish. Every tool answers one envelope: version, ok, operation, data (on success) or error {code, message, retryable, details}, warnings, meta.";

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

/**
 * The tools a server without the agent's checkout offers (the HTTP endpoint): `commit` needs
 * the checkout's Git, so a remote agent commits itself; everything else is the same tool.
 */
export const REMOTE_OPERATIONS = OPERATIONS.filter((op) => op !== "commit");

/** tools/list: names, one-line descriptions, annotations and the generated schemas. */
export function toolList(ops: readonly Operation[] = OPERATIONS): Tool[] {
  return ops.map((op) => ({
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

/** An envelope as a tool result: the same JSON as text and as structuredContent; a failure sets isError. */
export function toolResult(env: Envelope<unknown>): CallToolResult {
  const structured = McpOutput.parse(env) as Record<string, unknown>;
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }],
    structuredContent: structured,
    ...(env.ok ? {} : { isError: true }),
  };
}

/** A validated call: the operation and its arguments, parsed with the tool's strict schema. */
export type ToolCall = <K extends Operation>(
  op: K,
  input: McpInputs[K],
  signal: AbortSignal,
) => Promise<Envelope<unknown>>;

/**
 * Answers tools/list and tools/call on `server` with the tools of `ops`. An
 * unknown tool and arguments that do not match the schema are INVALID_INPUT;
 * anything `call` throws becomes its failure envelope (CANCELLED once the
 * client cancelled). Never a JSON-RPC error for a tool's own failure.
 */
export function serveTools(
  server: Server,
  ops: readonly Operation[],
  call: ToolCall,
  hidden?: { name: string; call(args: Record<string, unknown>): Promise<CallToolResult> },
): void {
  const tools = toolList(ops);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    // A tool the model is not shown (the guard's hook handler): called by name only.
    if (hidden && name === hidden.name) return hidden.call(request.params.arguments ?? {});
    const op = isOperation(name) && ops.includes(name) ? name : null;
    try {
      if (!op)
        throw new CohentError(
          "INVALID_INPUT",
          `No tool ${JSON.stringify(name.slice(0, 100))}; the tools are ${ops.join(", ")}.`,
        );
      const parsed = MCP_INPUTS[op].safeParse(request.params.arguments ?? {});
      if (!parsed.success)
        throw new CohentError(
          "INVALID_INPUT",
          "The arguments do not match the tool's input schema.",
          zodDetails(parsed.error),
        );
      return toolResult(await call(op, parsed.data, extra.signal));
    } catch (err) {
      return toolResult(
        extra.signal.aborted
          ? fail(op ?? name, "CANCELLED", "The operation was cancelled.")
          : failFrom(op ?? name, err),
      );
    }
  });
}
