// A scripted OpenAI Responses API for the real Codex CLI, on loopback.
// POST /v1/responses answers with SSE (response.created,
// response.output_item.added/done with one item, response.completed); every
// request body is recorded. Anything else is a 404.
import { eventStream, startRecording } from "./fake-server.ts";
import type { Recorded, Script } from "./script.ts";

export const CODEX_CALL_PREFIX = "call_";

export interface FakeOpenAI {
  url: string;
  /** base_url for Codex's model provider: `${url}/v1`. */
  baseUrl: string;
  requests: Recorded[];
  setScript(s: Script): void;
  close(): Promise<void>;
}

/** Tool results in a Responses request: what the client sent back so far. */
export function codexToolOutputs(body: any): { callId: string; output: string }[] {
  const input = Array.isArray(body?.input) ? body.input : [];
  return input
    .filter(
      (i: any) =>
        i?.type === "function_call_output" ||
        i?.type === "custom_tool_call_output" ||
        i?.type === "tool_search_output",
    )
    .map((i: any) => ({
      callId: String(i.call_id),
      output:
        i.type === "tool_search_output"
          ? JSON.stringify(i.tools ?? [])
          : typeof i.output === "string"
            ? i.output
            : JSON.stringify(i.output),
    }));
}

function item(turn: Awaited<ReturnType<Script["turn"]>>): Record<string, unknown> {
  const { action: a, callId } = turn;
  if (!a || !callId)
    return {
      type: "message",
      role: "assistant",
      id: "msg_done",
      content: [{ type: "output_text", text: "done", annotations: [] }],
    };
  switch (a.kind) {
    case "shell":
      return {
        type: "function_call",
        id: `fc_${callId}`,
        call_id: callId,
        name: "exec_command",
        arguments: JSON.stringify({ cmd: a.command }),
      };
    case "write":
      return {
        type: "custom_tool_call",
        id: `ctc_${callId}`,
        call_id: callId,
        name: "apply_patch",
        input: `*** Begin Patch\n*** Add File: ${a.path}\n${a.content
          .split("\n")
          .map((l) => "+" + l)
          .join("\n")}\n*** End Patch\n`,
      };
    case "patch":
      return {
        type: "custom_tool_call",
        id: `ctc_${callId}`,
        call_id: callId,
        name: "apply_patch",
        input: a.patch,
      };
    case "codex-call":
      return {
        type: "function_call",
        id: `fc_${callId}`,
        call_id: callId,
        name: a.name,
        arguments: JSON.stringify(a.args),
      };
    case "codex-item":
      return { ...a.item, call_id: callId };
    case "claude-call":
      throw new Error(`Codex has no ${a.name} tool in this suite`);
    case "end-turn":
      throw new Error("end-turn steps are scripted for Claude Code only");
    case "tool":
    case "custom-tool":
      throw new Error(`${a.kind} steps are scripted for the Chat Completions and Gemini fakes only`);
  }
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: Recorded[] = [];
  let script: Script | null = null;
  let n = 0;
  const server = await startRecording(requests, async (req, path, body, res) => {
    if (req.method !== "POST" || path !== "/v1/responses" || !script) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: "not found", type: "not_found" } }));
      return;
    }
    const turn = await script.turn(
      codexToolOutputs(body).map((o) => o.output),
      CODEX_CALL_PREFIX,
    );
    const id = `resp_${++n}`;
    const out = item(turn);
    const send = eventStream(res);
    send("response.created", { response: { id, object: "response", status: "in_progress", output: [] } });
    send("response.output_item.added", { output_index: 0, item: out });
    send("response.output_item.done", { output_index: 0, item: out });
    send("response.completed", {
      response: {
        id,
        object: "response",
        status: "completed",
        output: [out],
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 5,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 15,
        },
      },
    });
    res.end();
  });
  return {
    url: server.url,
    baseUrl: `${server.url}/v1`,
    requests,
    setScript: (s) => {
      script = s;
    },
    close: server.close,
  };
}
