// What the two scripted model APIs share: a loopback HTTP server that records
// every request (its body parsed as JSON when it parses) before the API's own
// handler answers it, and the server-sent events both stream.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Recorded } from "./script.ts";

export interface RecordingServer {
  url: string;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Listens on 127.0.0.1; each request is pushed to `requests`, then `answer` gets its path and body. */
export async function startRecording(
  requests: Recorded[],
  answer: (req: IncomingMessage, path: string, body: any, res: ServerResponse) => Promise<void>,
): Promise<RecordingServer> {
  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    let body: any;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    await answer(req, (req.url ?? "").split("?")[0]!, body, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Starts an event stream on `res`; each call of the answer sends one event whose data carries its type. */
export function eventStream(res: ServerResponse): (type: string, data: Record<string, unknown>) => void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  return (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}
