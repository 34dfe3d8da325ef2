import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** An SDK client over Streamable HTTP to a backend's /mcp, with the agent token; `sessionId` resumes a session (no initialize). */
export async function connectHttp(
  base: string,
  token: string,
  opts: { name?: string; version?: string; sessionId?: string } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; close: () => Promise<void> }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    ...(opts.sessionId ? { sessionId: opts.sessionId } : {}),
  });
  const client = new Client({ name: opts.name ?? "cloud-agent", version: opts.version ?? "2.4.0" });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/** One raw POST /mcp, as a hostile or minimal client sends it. */
export async function rawMcp(
  base: string,
  init: { body?: string | Uint8Array; headers?: Record<string, string>; method?: string },
): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(`${base}/mcp`, {
    method: init.method ?? "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...init.headers,
    },
    body: init.body as BodyInit | undefined,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}

export const initializeBody = (name = "raw-client") =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "1.0.0" } },
  });
