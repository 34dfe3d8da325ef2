// A stand-in for Cohent's MCP guard, for the zero-spawn probes: a stdio MCP
// server (newline-delimited JSON-RPC, no SDK) with one tool, `guard`, that
// answers as a hook would. Every line it reads is logged, so a probe can tell
// whether a client started the server at all and whether it called the tool.
//
//   node guard-mcp.mjs --log FILE --mode MODE
//
// A call of any other tool name is a JSON-RPC error ("Tool X not found").
// MODE (what `tools/call guard` does):
//   deny     one text item: Claude's PreToolUse deny JSON, reason R-MCP-GUARD
//   allow    one text item: {} (no decision)
//   iserror  isError: true, text "guard failed"
//   rpcerror a JSON-RPC error
//   hang     never answers
//   die      exits (code 1) on the call, before answering
//   startfail exits at once, before `initialize`
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : process.argv[i + 1];
};
const LOG = arg("log", null);
const MODE = arg("mode", "deny");
const log = (entry) => {
  if (LOG)
    appendFileSync(LOG, JSON.stringify({ t: Date.now(), pid: process.pid, mode: MODE, ...entry }) + "\n");
};

log({ event: "start", argv: process.argv.slice(2) });
if (MODE === "startfail") {
  log({ event: "exit-at-start" });
  process.exit(1);
}

const DENY = JSON.stringify({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: "R-MCP-GUARD: refused by the MCP guard",
  },
});

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    log({ event: "junk", line });
    return;
  }
  log({ event: "request", method: req.method, id: req.id, params: req.params });
  if (req.id === undefined) return; // notifications
  switch (req.method) {
    case "initialize":
      return send({
        id: req.id,
        result: {
          protocolVersion: req.params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "cohent", version: "0.0.0-probe" },
        },
      });
    case "tools/list":
      return send({
        id: req.id,
        result: {
          tools: [
            {
              name: "guard",
              description: "Cohent's guard (probe stand-in). Do not call it yourself.",
              inputSchema: { type: "object", properties: {}, additionalProperties: true },
            },
          ],
        },
      });
    case "tools/call": {
      log({ event: "guard-call", name: req.params?.name, arguments: req.params?.arguments });
      // A real server refuses a tool it does not have (as the SDK does: a JSON-RPC error).
      if (req.params?.name !== "guard")
        return send({ id: req.id, error: { code: -32602, message: `Tool ${req.params?.name} not found` } });
      switch (MODE) {
        case "deny":
          return send({ id: req.id, result: { content: [{ type: "text", text: DENY }] } });
        case "allow":
          return send({ id: req.id, result: { content: [{ type: "text", text: "{}" }] } });
        case "iserror":
          return send({
            id: req.id,
            result: { isError: true, content: [{ type: "text", text: "guard failed" }] },
          });
        case "rpcerror":
          return send({ id: req.id, error: { code: -32603, message: "guard exploded" } });
        case "hang":
          return; // never answers
        case "die":
          log({ event: "exit-on-call" });
          return process.exit(1);
        default:
          return send({ id: req.id, error: { code: -32602, message: `unknown mode ${MODE}` } });
      }
    }
    case "ping":
      return send({ id: req.id, result: {} });
    default:
      return send({ id: req.id, error: { code: -32601, message: `no method ${req.method}` } });
  }
});
