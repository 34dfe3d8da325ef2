/**
 * The client-side operations: what the agent CLI, the MCP tools and the
 * human CLI ask the adapter to do, each of which the adapter's operation
 * layer turns into agent calls. Zod-free: the hook bundle imports it. Their
 * inputs are operation-inputs.ts.
 */
export const OPERATIONS = [
  "publish",
  "intent",
  "scope",
  "checkpoint",
  "context",
  "commit",
  "request-release",
] as const;
export type Operation = (typeof OPERATIONS)[number];

export const isOperation = (s: string | undefined): s is Operation =>
  (OPERATIONS as readonly string[]).includes(s ?? "");
