import { createRequire } from "node:module";
import { z } from "zod";
import {
  CheckpointResponse,
  CommitResponse,
  ContextResponse,
  FailureEnvelope,
  IntentResponse,
  OPERATION_INPUTS as INPUTS,
  OPERATIONS,
  PublishResponse,
  ReleaseRequestResponse,
  ScopeResponse,
  successEnvelope,
  type Operation,
  type OperationInputs as Inputs,
} from "@cohent/protocol";

/**
 * The requests of the agent CLI and the MCP tools: the protocol's operation
 * inputs (protocol/src/operation-inputs.ts), one zod schema per operation.
 * The JSON Schemas that `agent schema` prints and that tools/list publishes
 * are generated from these same objects (in the MCP bundle, at build time:
 * COHENT_SCHEMAS below), and the transports validate with them.
 */

export { isOperation, OPERATIONS, type Operation } from "@cohent/protocol";
export {
  CheckpointInput,
  CheckpointSource,
  CommitInput,
  ContextInput,
  IntentInput,
  PublishInput,
  ReleaseInput,
  ScopeInput,
} from "@cohent/protocol";
export { INPUTS, type Inputs };

/**
 * Success or failure, one envelope. `agent schema` prints the protocol's full
 * alternatives (operation data, every error code); MCP publishes this
 * permissive form: the SDK client validates error results against the same
 * schema, and tools/list stays within its token budget. `data` (on success)
 * and `error` ({ code, message, retryable, details? }) pass through as extra
 * keys; the server's instructions name them once rather than every tool.
 */
export const McpOutput = z.looseObject({
  version: z.literal(1),
  ok: z.boolean(),
  operation: z.string(),
  warnings: z.array(z.string()),
  meta: z.looseObject({}),
});

export const RESPONSE_DATA = {
  publish: PublishResponse,
  intent: IntentResponse,
  scope: ScopeResponse,
  checkpoint: CheckpointResponse,
  context: ContextResponse,
  commit: CommitResponse,
  "request-release": ReleaseRequestResponse,
} as const satisfies Record<Operation, z.ZodType>;

export type JsonSchema = { [k: string]: unknown };
export type OperationSchema = { version: 1; operation: Operation; input: JsonSchema; output: JsonSchema };
export type ToolSchemas = { inputSchema: JsonSchema; outputSchema: JsonSchema };
export type GeneratedSchemas = {
  operations: Record<Operation, OperationSchema>;
  tools: Record<Operation, ToolSchemas>;
};

/** The full contract of one operation: strict input, and the success or failure alternatives (draft 7). */
export function operationSchema(op: Operation): OperationSchema {
  return typeof COHENT_SCHEMAS !== "undefined" ? built().operations[op] : generateOperationSchema(op);
}

function generateOperationSchema(op: Operation): OperationSchema {
  const output = z.union([successEnvelope(RESPONSE_DATA[op]), FailureEnvelope]);
  return {
    version: 1,
    operation: op,
    input: z.toJSONSchema(INPUTS[op], { target: "draft-7", io: "input" }) as JsonSchema,
    output: z.toJSONSchema(output, { target: "draft-7", io: "output" }) as JsonSchema,
  };
}

/**
 * Drops what does not change validation: $schema, defaults (the server
 * applies them), no-op keywords zod emits ({} for additionalProperties,
 * empty properties, string propertyNames), and a type that its const or
 * enum already implies.
 */
export function compactSchema<T>(node: T): T {
  if (Array.isArray(node)) return node.map(compactSchema) as T;
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$schema" || k === "default") continue;
    if (k === "additionalProperties" && v && typeof v === "object" && Object.keys(v).length === 0) continue;
    if (k === "properties" && v && typeof v === "object" && Object.keys(v).length === 0) continue;
    if (k === "propertyNames" && JSON.stringify(v) === '{"type":"string"}') continue;
    if (k === "type" && typeof v === "string" && impliedType(node as Record<string, unknown>) === v) continue;
    out[k] =
      k === "properties"
        ? Object.fromEntries(Object.entries(v as object).map(([pk, pv]) => [pk, compactSchema(pv)]))
        : compactSchema(v);
  }
  return out as T;
}

function impliedType(node: Record<string, unknown>): string | null {
  const values = "const" in node ? [node.const] : Array.isArray(node.enum) ? node.enum : null;
  if (!values?.length) return null;
  const types = new Set(values.map((v) => (v === null ? "null" : typeof v)));
  return types.size === 1 && (types.has("string") || types.has("number") || types.has("boolean"))
    ? [...types][0]!
    : null;
}

/** What an MCP tool accepts for each operation: its input without `version` (and scope's `wait`). */
export type McpInputs = { [K in Operation]: Omit<Inputs[K], "version" | "wait"> };

/**
 * What tools/list publishes for one operation. MCP carries its own protocol
 * version, so the request's optional `version` is left out of the listing
 * (and of what the tool accepts), and so is scope's `wait` (a tool call
 * should not block for minutes). A mapped type, so that `MCP_INPUTS[op]`
 * with a generic `op: K` parses to `McpInputs[K]`. The one cast: the table
 * is built from the list of operations, which zod's types cannot follow.
 */
export const MCP_INPUTS = Object.fromEntries(
  OPERATIONS.map((op) => [
    op,
    (INPUTS[op] as z.ZodObject).omit(op === "scope" ? { version: true, wait: true } : { version: true }),
  ]),
) as unknown as { [K in Operation]: z.ZodType<McpInputs[K]> };

/** Bounds this generous no agent reaches (a path's 512 characters, 64 paths, a 16,000-character prompt). */
const GENEROUS = { maxLength: 500, maxItems: 64 } as const;

/**
 * The listing's form of an input schema, within the tools/list token budget:
 * compact, without the bounds no agent reaches, "non-empty", and the name
 * pattern (the intent tool's description states it once). The server still validates
 * every call with the full schema (INVALID_INPUT with the issue), and `agent
 * schema` prints it whole.
 */
export function listingSchema<T>(node: T): T {
  if (Array.isArray(node)) return node.map(listingSchema) as T;
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "pattern" || (k === "minLength" && v === 1)) continue;
    if ((k === "maxLength" || k === "maxItems") && typeof v === "number" && v >= GENEROUS[k]) continue;
    out[k] =
      k === "properties"
        ? Object.fromEntries(Object.entries(v as object).map(([pk, pv]) => [pk, listingSchema(pv)]))
        : listingSchema(v);
  }
  return out as T;
}

export function toolSchemas(op: Operation): ToolSchemas {
  return typeof COHENT_SCHEMAS !== "undefined" ? built().tools[op] : generateToolSchemas(op);
}

function generateToolSchemas(op: Operation): ToolSchemas {
  return {
    inputSchema: listingSchema(
      compactSchema(z.toJSONSchema(MCP_INPUTS[op], { target: "draft-7", io: "input" }) as JsonSchema),
    ),
    outputSchema: compactSchema(z.toJSONSchema(McpOutput, { target: "draft-7", io: "output" }) as JsonSchema),
  };
}

/**
 * In the MCP bundle, generatedSchemas()'s result as adapter/build.mjs computed
 * it at build time (JSON, brotli, base64: 70 KB of JSON, 3 KB in the file), so
 * the bundle needs no JSON Schema generator (trimMcp leaves zod's out). Where
 * it is defined, the conditionals above fold and the generating code drops
 * out of the bundle. Undefined when the source runs as is (tsx, tests): then
 * the schemas are generated on each call.
 */
declare const COHENT_SCHEMAS: string;

let prebuilt: GeneratedSchemas | undefined;
/** COHENT_SCHEMAS, decoded on first use; node:zlib loads only then (a static import would be paid by every `agent` call). */
function built(): GeneratedSchemas {
  if (!prebuilt) {
    const zlib = createRequire(import.meta.url)("node:zlib") as typeof import("node:zlib");
    prebuilt = JSON.parse(zlib.brotliDecompressSync(Buffer.from(COHENT_SCHEMAS, "base64")).toString());
  }
  return prebuilt!;
}

/** Every operation's and tool's schemas: what adapter/build.mjs precomputes for the MCP bundle. */
export function generatedSchemas(): GeneratedSchemas {
  const each = <T>(f: (op: Operation) => T) =>
    Object.fromEntries(OPERATIONS.map((op) => [op, f(op)])) as Record<Operation, T>;
  return { operations: each(operationSchema), tools: each(toolSchemas) };
}
