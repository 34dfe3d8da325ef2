// A minimal stdio MCP server for the conformance suite: one tool, `touch`,
// which writes a file (absolute path). Newline-delimited JSON-RPC, no SDK.
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    return;
  }
  if (req.id === undefined) return; // notifications
  switch (req.method) {
    case "initialize":
      return send({
        id: req.id,
        result: {
          protocolVersion: req.params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "demo", version: "1.0.0" },
        },
      });
    case "tools/list":
      return send({
        id: req.id,
        result: {
          tools: [
            {
              name: "touch",
              description: "Write a file at an absolute path.",
              inputSchema: {
                type: "object",
                properties: { path: { type: "string" }, text: { type: "string" } },
                required: ["path"],
              },
            },
          ],
        },
      });
    case "tools/call": {
      const { path, text } = req.params?.arguments ?? {};
      try {
        writeFileSync(path, `${text ?? "touched"}\n`);
        return send({ id: req.id, result: { content: [{ type: "text", text: `MCP-TOUCHED ${path}` }] } });
      } catch (err) {
        return send({
          id: req.id,
          result: { isError: true, content: [{ type: "text", text: String(err) }] },
        });
      }
    }
    case "ping":
      return send({ id: req.id, result: {} });
    default:
      return send({ id: req.id, error: { code: -32601, message: `no method ${req.method}` } });
  }
});
