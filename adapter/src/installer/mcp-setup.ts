import { join } from "node:path";
import { MCP_FILES } from "../guard/guard-files.js";

/**
 * The MCP entries `cohent init` prints, and writes with --mcp-write (merged
 * into what is there). Each starts `node .cohent/cohent.mjs mcp`: the script
 * binds the server to its own checkout, so no --repo is needed. Clients that
 * expand ${workspaceFolder} get a portable path; Codex gets this checkout's
 * absolute path, since its working directory for a server is not the project.
 */

export interface McpEntry {
  client: string;
  file: string;
  /** The file's new content, given its current content. */
  merge: (existing: string) => string;
  /** What to print for this client. */
  snippet: string;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) + "\n";

function parseObject(text: string, file: string): Record<string, any> {
  if (text.trim() === "") return {};
  const v = JSON.parse(text);
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error(`${file} is not a JSON object`);
  return v;
}

/** Replaces the [mcp_servers.cohent] table (up to the next table header) or appends it. */
export function mergeTomlTable(existing: string, header: string, body: string): string {
  const table = `${header}\n${body.trimEnd()}\n`;
  const lines = existing.split("\n");
  const start = lines.findIndex((l) => l.trim() === header);
  if (start === -1) return existing.trim() === "" ? table : existing.replace(/\n*$/, "\n\n") + table;
  let end = lines.findIndex((l, i) => i > start && /^\s*\[/.test(l));
  if (end === -1) end = lines.length;
  const after = lines.slice(end).join("\n");
  return [
    ...lines.slice(0, start),
    ...table.trimEnd().split("\n"),
    ...(after ? ["", after.replace(/^\n+/, "")] : [""]),
  ]
    .join("\n")
    .replace(/\n{3,}/g, "\n\n");
}

export function mcpEntries(root: string): McpEntry[] {
  const script = join(root, ".cohent", "cohent.mjs");
  const portable = { command: "node", args: ["${workspaceFolder}/.cohent/cohent.mjs", "mcp"] };
  const codexBody = `command = "node"\nargs = [${JSON.stringify(script)}, "mcp"]`;
  return [
    {
      client: "Claude Code",
      file: MCP_FILES.claude,
      merge: (t) => {
        const o = parseObject(t, MCP_FILES.claude);
        return json({
          ...o,
          mcpServers: {
            ...(o.mcpServers ?? {}),
            cohent: { command: "node", args: [".cohent/cohent.mjs", "mcp"] },
          },
        });
      },
      snippet: `claude mcp add --scope project cohent -- node .cohent/cohent.mjs mcp\n# or .mcp.json: {"mcpServers":{"cohent":{"command":"node","args":[".cohent/cohent.mjs","mcp"]}}}`,
    },
    {
      client: "Codex",
      file: MCP_FILES.codex,
      merge: (t) => mergeTomlTable(t, "[mcp_servers.cohent]", codexBody),
      snippet: `# .codex/config.toml (or ~/.codex/config.toml)\n[mcp_servers.cohent]\n${codexBody}`,
    },
    {
      client: "Cursor",
      file: MCP_FILES.cursor,
      merge: (t) => {
        const o = parseObject(t, MCP_FILES.cursor);
        return json({ ...o, mcpServers: { ...(o.mcpServers ?? {}), cohent: portable } });
      },
      snippet: `# .cursor/mcp.json\n${JSON.stringify({ mcpServers: { cohent: portable } })}`,
    },
    {
      client: "VS Code",
      file: MCP_FILES.vscode,
      merge: (t) => {
        const o = parseObject(t, MCP_FILES.vscode);
        return json({ ...o, servers: { ...(o.servers ?? {}), cohent: { type: "stdio", ...portable } } });
      },
      snippet: `# .vscode/mcp.json\n${JSON.stringify({ servers: { cohent: { type: "stdio", ...portable } } })}`,
    },
  ];
}

export function renderMcpEntries(root: string): string {
  return [
    "MCP server (tools publish, intent, scope, checkpoint, context); add it to a client, or rerun init with --mcp-write:",
    ...mcpEntries(root).map((e) => `\n${e.client}:\n${e.snippet}`),
  ].join("\n");
}
