// A scripted Gemini API (generativelanguage v1beta) on loopback, for the
// real Gemini CLI (GOOGLE_GEMINI_BASE_URL). POST
// /v1beta/models/<model>:streamGenerateContent?alt=sse answers with one SSE
// event carrying one part: a functionCall or a final text. The turn index is
// the number of functionResponse parts in the request (the tool results sent
// back). Side requests (no tools offered: the next-speaker check, loop
// detection, summaries; `:generateContent`, `:countTokens`) get a neutral
// answer and do not advance the script. A request whose user text carries
// SUBAGENT_MARK (fake-chat.ts) is a sub-agent's (invoke_agent) and is answered
// from the sub-script. Every request body is recorded.
import type { ServerResponse } from "node:http";
import { startRecording } from "./fake-server.ts";
import { SUBAGENT_MARK } from "./fake-chat.ts";
import type { ModelTurn, Recorded, Script } from "./script.ts";

export const GEMINI_CALL_PREFIX = "gcall_";
export const GEMINI_SUB_PREFIX = "gcall_sub";

export interface FakeGemini {
  url: string;
  requests: Recorded[];
  setScript(s: Script, sub?: Script | null): void;
  close(): Promise<void>;
}

/** functionResponse parts in a request, in order: id (or name) and the response as JSON text. */
export function geminiToolResults(body: any): { callId: string; output: string }[] {
  const out: { callId: string; output: string }[] = [];
  for (const c of Array.isArray(body?.contents) ? body.contents : [])
    for (const p of Array.isArray(c?.parts) ? c.parts : [])
      if (p?.functionResponse)
        out.push({
          callId: String(p.functionResponse.id ?? p.functionResponse.name),
          output: JSON.stringify(p.functionResponse.response ?? null),
        });
  return out;
}

function isSubagent(body: any): boolean {
  return (Array.isArray(body?.contents) ? body.contents : []).some(
    (c: any) =>
      c?.role === "user" &&
      (Array.isArray(c.parts) ? c.parts : []).some(
        (p: any) => typeof p?.text === "string" && p.text.includes(SUBAGENT_MARK),
      ),
  );
}

function offersTools(body: any): boolean {
  return (Array.isArray(body?.tools) ? body.tools : []).some(
    (t: any) => Array.isArray(t?.functionDeclarations) && t.functionDeclarations.length > 0,
  );
}

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

function candidate(parts: Record<string, unknown>[]): Record<string, unknown> {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: USAGE,
    modelVersion: "gemini-2.5-flash",
  };
}

function parts(turn: ModelTurn | null): Record<string, unknown>[] {
  const a = turn?.action;
  if (!turn || !a || !turn.callId) return [{ text: "done" }];
  if (a.kind === "end-turn") return [{ text: a.text }];
  if (a.kind !== "tool") throw new Error(`the Gemini fake scripts "tool" actions, not ${a.kind}`);
  return [{ functionCall: { id: turn.callId, name: a.name, args: a.args } }];
}

function sse(res: ServerResponse, data: Record<string, unknown>): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
  res.end();
}

export async function startFakeGemini(): Promise<FakeGemini> {
  const requests: Recorded[] = [];
  let script: Script | null = null;
  let subScript: Script | null = null;
  const server = await startRecording(requests, async (req, path, body, res) => {
    const m = /^\/v1beta\/models\/([^:]+):(\w+)$/.exec(path);
    if (req.method !== "POST" || !m || !script) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: 404, message: "not found", status: "NOT_FOUND" } }));
      return;
    }
    const method = m[2];
    if (method === "countTokens") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ totalTokens: 10 }));
      return;
    }
    if (!offersTools(body)) {
      // A side request: the next-speaker check wants JSON, the others any text.
      const json = body?.generationConfig?.responseMimeType === "application/json";
      const text = json ? JSON.stringify({ reasoning: "done", next_speaker: "user" }) : "ok";
      const data = candidate([{ text }]);
      if (method === "streamGenerateContent") sse(res, data);
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(data));
      return;
    }
    const outputs = geminiToolResults(body).map((o) => o.output);
    const turn =
      subScript && isSubagent(body)
        ? await subScript.turn(outputs, GEMINI_SUB_PREFIX)
        : await script.turn(outputs, GEMINI_CALL_PREFIX);
    const data = candidate(parts(turn));
    if (method === "streamGenerateContent") sse(res, data);
    else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(data));
  });
  return {
    url: server.url,
    requests,
    setScript: (s, sub = null) => {
      script = s;
      subScript = sub;
    },
    close: server.close,
  };
}
