import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * What the conformance suite needs in front of our two servers, and no more:
 * its client sends no credentials, so /mcp is reached through a proxy that
 * adds the agent token and passes everything else through untouched (Host and
 * Origin included); and the stdio server is reached through a thin Streamable
 * HTTP shim, the SDK's own server transport relaying JSON-RPC messages to one
 * child process per MCP session, unchanged in both directions.
 */

export interface Listening {
  url: string;
  close(): Promise<void>;
}

async function listen(server: http.Server, path: string): Promise<Listening> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Forwards every request to `target` (the backend's /mcp) with `Authorization: Bearer <token>` added. */
export function authProxy(target: string, token: string): Promise<Listening> {
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      {
        host: to.hostname,
        port: to.port,
        path: to.pathname,
        method: req.method,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return listen(server, "/mcp");
}

/** A Streamable HTTP front for a stdio MCP server: `spawn` gives the child's command for each new session. */
export function stdioShim(
  spawn: () => { command: string; args: string[]; cwd: string; env: Record<string, string> },
): Promise<Listening> {
  const sessions = new Map<string, { front: StreamableHTTPServerTransport; child: StdioClientTransport }>();
  let origins: string[] = [];
  let hosts: string[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: unknown;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      return res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }),
      );
    }
    const sid = req.headers["mcp-session-id"];
    const known = typeof sid === "string" ? sessions.get(sid) : undefined;
    if (known) return known.front.handleRequest(req, res, body);
    if (sid !== undefined || !isInitializeRequest(body)) {
      res.writeHead(sid === undefined ? 400 : 404, { "content-type": "application/json" });
      return res.end(
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }),
      );
    }
    const child = new StdioClientTransport({ ...spawn(), stderr: "ignore" });
    const front = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      // The SDK's own DNS-rebinding protection, for a server on loopback.
      enableDnsRebindingProtection: true,
      allowedHosts: hosts,
      allowedOrigins: origins,
      onsessioninitialized: (id) => void sessions.set(id, { front, child }),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    front.onmessage = (m: JSONRPCMessage) => void child.send(m);
    child.onmessage = (m: JSONRPCMessage) => void front.send(m).catch(() => undefined);
    front.onclose = () => void child.close();
    await child.start();
    await front.start();
    await front.handleRequest(req, res, body);
  });
  return listen(server, "/mcp").then((l) => {
    const { host } = new URL(l.url);
    const port = host.split(":")[1];
    hosts = [host, `localhost:${port}`, `[::1]:${port}`];
    origins = hosts.map((h) => `http://${h}`);
    return {
      url: l.url,
      close: async () => {
        for (const { front } of sessions.values()) await front.close();
        await l.close();
      },
    };
  });
}
