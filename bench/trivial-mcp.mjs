// The least an mcp_tool hook handler can be (bench/client-latency.ts, wiring `trivial`): a stdio MCP
// server with no SDK that answers `initialize`, an empty `tools/list`, and every `tools/call` with `{}`
// (no decision) at once. What Claude Code itself spends on calling a handler, with no guard in it.
import { createInterface } from "node:readline";

const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined || m.id === null) return;
  if (m.method === "initialize")
    send({
      jsonrpc: "2.0",
      id: m.id,
      result: {
        protocolVersion: m.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "trivial", version: "0" },
      },
    });
  else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [] } });
  else if (m.method === "tools/call")
    send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "{}" }] } });
  else send({ jsonrpc: "2.0", id: m.id, result: {} });
});
