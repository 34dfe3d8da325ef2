// A scripted OpenAI Chat Completions API on loopback, for the clients that
// speak it to a custom provider: Copilot CLI (BYOK, COPILOT_PROVIDER_BASE_URL)
// and OpenCode (an @ai-sdk/openai-compatible provider in opencode.json).
// POST /v1/chat/completions answers, streamed or not, with one tool call per
// turn or a final text; every request body is recorded. The turn index is
// the number of `role: "tool"` messages in the request (the tool results sent
// back), so a retried request gets the same answer. A request whose user text
// carries SUBAGENT_MARK is a sub-agent's and is answered from the sub-script.
// Requests that offer no tools (titles, summaries) get a plain text answer.
import type { ServerResponse } from "node:http";
import { startRecording } from "./fake-server.ts";
import type { Action, ModelTurn, Recorded, Script } from "./script.ts";

export const CHAT_CALL_PREFIX = "call_";
export const CHAT_SUB_PREFIX = "call_sub";
/** A sub-agent's task carries this mark; its requests are answered from the sub-script. */
export const SUBAGENT_MARK = "SUBAGENT-TASK";

export interface FakeChat {
  url: string;
  /** `${url}/v1`: the provider base URL. */
  baseUrl: string;
  requests: Recorded[];
  setScript(s: Script, sub?: Script | null): void;
  close(): Promise<void>;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((c: any) => (typeof c === "string" ? c : typeof c?.text === "string" ? c.text : JSON.stringify(c)))
      .join("\n");
  return content == null ? "" : JSON.stringify(content);
}

/** The tool results in a Chat Completions request: what the client sent back so far, in order. */
export function chatToolResults(body: any): { callId: string; output: string }[] {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  return messages
    .filter((m) => m?.role === "tool")
    .map((m) => ({ callId: String(m.tool_call_id), output: textOf(m.content) }));
}

function isSubagent(body: any): boolean {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  return messages.some((m) => m?.role === "user" && textOf(m.content).includes(SUBAGENT_MARK));
}

/** The names of the tools a request offers (function tools by name, custom tools by name too). */
export function chatToolNames(body: any): string[] {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  return tools.map((t) => String(t?.function?.name ?? t?.custom?.name ?? t?.name ?? `<${t?.type}>`));
}

/** One assistant tool call in Chat Completions form; `custom-tool` becomes a custom tool call. */
function toolCall(a: Action, callId: string): Record<string, unknown> {
  switch (a.kind) {
    case "tool":
      return {
        index: 0,
        id: callId,
        type: "function",
        function: { name: a.name, arguments: JSON.stringify(a.args) },
      };
    case "custom-tool":
      return { index: 0, id: callId, type: "custom", custom: { name: a.name, input: a.input } };
    default:
      throw new Error(`the Chat Completions fake scripts "tool" and "custom-tool" actions, not ${a.kind}`);
  }
}

function send(res: ServerResponse, stream: boolean, model: string, turn: ModelTurn | null, n: number): void {
  const id = `chatcmpl-${n}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const a = turn?.action ?? null;
  const text = !a || !turn?.callId ? "done" : a.kind === "end-turn" ? a.text : null;
  const call = text === null ? toolCall(a!, turn!.callId!) : null;
  const finish = call ? "tool_calls" : "stop";
  if (!stream) {
    const { index: _index, ...full } = (call ?? {}) as Record<string, unknown>;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [
          {
            index: 0,
            message: call
              ? { role: "assistant", content: null, tool_calls: [full] }
              : { role: "assistant", content: text },
            finish_reason: finish,
          },
        ],
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null, extra = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`,
    );
  chunk({ role: "assistant", content: call ? null : "" }, null);
  if (call) chunk({ tool_calls: [call] }, null);
  else chunk({ content: text }, null);
  chunk({}, finish, { usage });
  res.write("data: [DONE]\n\n");
  res.end();
}

export async function startFakeChat(): Promise<FakeChat> {
  const requests: Recorded[] = [];
  let script: Script | null = null;
  let subScript: Script | null = null;
  let n = 0;
  const server = await startRecording(requests, async (req, path, body, res) => {
    if (req.method === "GET" && path === "/v1/models") {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(
          JSON.stringify({ object: "list", data: [{ id: "gpt-5.4", object: "model", owned_by: "fake" }] }),
        );
      return;
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions" || !script) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: "not found", type: "not_found" } }));
      return;
    }
    const model = typeof body?.model === "string" ? body.model : "gpt-5.4";
    const stream = body?.stream === true;
    const outputs = chatToolResults(body).map((o) => o.output);
    let turn: ModelTurn | null = null;
    if (chatToolNames(body).length > 0) {
      turn =
        subScript && isSubagent(body)
          ? await subScript.turn(outputs, CHAT_SUB_PREFIX)
          : await script.turn(outputs, CHAT_CALL_PREFIX);
    }
    send(res, stream, model, turn, ++n);
  });
  return {
    url: server.url,
    baseUrl: `${server.url}/v1`,
    requests,
    setScript: (s, sub = null) => {
      script = s;
      subScript = sub;
    },
    close: server.close,
  };
}
