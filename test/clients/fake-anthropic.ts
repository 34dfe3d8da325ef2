// A scripted Anthropic Messages API for the real Claude Code, on loopback.
// POST /v1/messages (Claude Code sends ?beta=true) answers with the standard
// streaming events; every request body is recorded; anything else is a 404.
// Side requests that offer no Bash tool (titles, summaries) get a plain
// text answer and do not advance the script.
import { isAbsolute, join } from "node:path";
import { eventStream, startRecording } from "./fake-server.ts";
import type { Recorded, Script } from "./script.ts";

export const CLAUDE_CALL_PREFIX = "toolu_";
/** A sub-agent (the Agent tool) is told its task in its first message; a prompt carrying this mark is answered from the sub-script. */
export const SUBAGENT_MARK = "SUBAGENT-TASK";
export const CLAUDE_SUB_PREFIX = "toolu_sub";

export interface FakeAnthropic {
  url: string;
  requests: Recorded[];
  /** The repository root: Write wants absolute paths. `sub` answers the sub-agents' requests. */
  setScript(s: Script, repoRoot: string, sub?: Script | null): void;
  close(): Promise<void>;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((c: any) => (typeof c === "string" ? c : c?.type === "text" ? c.text : JSON.stringify(c)))
      .join("\n");
  return JSON.stringify(content);
}

/** tool_result blocks in a Messages request: what the client sent back so far. */
export function claudeToolResults(body: any): { callId: string; output: string; isError: boolean }[] {
  const out: { callId: string; output: string; isError: boolean }[] = [];
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    if (m?.role !== "user" || !Array.isArray(m.content)) continue;
    for (const c of m.content) {
      if (c?.type === "tool_result")
        out.push({ callId: String(c.tool_use_id), output: textOf(c.content), isError: !!c.is_error });
    }
  }
  return out;
}

/** A sub-agent's conversation: its user text (not tool results) carries the mark the main script put in the Agent prompt. */
function isSubagent(body: any): boolean {
  if (!Array.isArray(body?.tools) || body.tools.length === 0) return false;
  return (Array.isArray(body?.messages) ? body.messages : []).some(
    (m: any) =>
      m?.role === "user" &&
      (typeof m.content === "string"
        ? m.content.includes(SUBAGENT_MARK)
        : Array.isArray(m.content) &&
          m.content.some((c: any) => c?.type === "text" && String(c.text).includes(SUBAGENT_MARK))),
  );
}

/** Assistant turns in the conversation that made no tool call: the script's `end-turn` steps already taken. */
function endedTurns(body: any): number {
  return (Array.isArray(body?.messages) ? body.messages : []).filter(
    (m: any) =>
      m?.role === "assistant" &&
      !(Array.isArray(m.content) && m.content.some((c: any) => c?.type === "tool_use")),
  ).length;
}

function isMainLoop(body: any): boolean {
  return Array.isArray(body?.tools) && body.tools.some((t: any) => t?.name === "Bash");
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const requests: Recorded[] = [];
  let script: Script | null = null;
  let subScript: Script | null = null;
  let root = "/";
  let n = 0;
  const server = await startRecording(requests, async (req, path, body, res) => {
    if (req.method !== "POST" || path !== "/v1/messages" || !script) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "not found" } }));
      return;
    }
    const id = `msg_${++n}`;
    const model = typeof body?.model === "string" ? body.model : "claude-sonnet-4-5";
    let block: Record<string, unknown>;
    let input: Record<string, unknown> | null = null;
    const sub = !!subScript && isSubagent(body);
    if (!sub && !isMainLoop(body)) {
      block = { type: "text", text: "ok" };
    } else {
      const turn = sub
        ? await subScript!.turn(
            claudeToolResults(body).map((o) => o.output),
            CLAUDE_SUB_PREFIX,
            endedTurns(body),
          )
        : await script.turn(
            claudeToolResults(body).map((o) => o.output),
            CLAUDE_CALL_PREFIX,
            endedTurns(body),
          );
      const a = turn.action;
      if (!turn.step || !turn.callId || !a) block = { type: "text", text: "done" };
      else if (a.kind === "end-turn") block = { type: "text", text: a.text };
      else if (a.kind === "shell") {
        block = { type: "tool_use", id: turn.callId, name: "Bash" };
        input = { command: a.command, description: turn.step.id };
      } else if (a.kind === "write") {
        block = { type: "tool_use", id: turn.callId, name: "Write" };
        input = { file_path: isAbsolute(a.path) ? a.path : join(root, a.path), content: a.content };
      } else if (a.kind === "claude-call") {
        block = { type: "tool_use", id: turn.callId, name: a.name };
        input = a.input;
      } else throw new Error(`Claude has no ${a.kind} tool`);
    }
    const stopReason = input ? "tool_use" : "end_turn";
    const message = {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    };
    if (body?.stream === false) {
      const full = input ? { ...block, input } : block;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          ...message,
          content: [full],
          stop_reason: stopReason,
          usage: { input_tokens: 10, output_tokens: 5 },
        }),
      );
      return;
    }
    const send = eventStream(res);
    send("message_start", { message });
    if (input) {
      send("content_block_start", { index: 0, content_block: { ...block, input: {} } });
      send("content_block_delta", {
        index: 0,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(input) },
      });
    } else {
      send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      send("content_block_delta", {
        index: 0,
        delta: { type: "text_delta", text: (block as { text: string }).text },
      });
    }
    send("content_block_stop", { index: 0 });
    send("message_delta", {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 5 },
    });
    send("message_stop", {});
    res.end();
  });
  return {
    url: server.url,
    requests,
    setScript: (s, repoRoot, sub = null) => {
      script = s;
      subScript = sub;
      root = repoRoot;
    },
    close: server.close,
  };
}
