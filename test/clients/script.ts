// The scripted model: what the fake model servers answer, turn by turn.
//
// A run is a list of steps. The model's turn index is how many tool results
// the client has sent back so far (counted from the request itself, so a
// retried request gets the same answer): turn 0 makes step 0's tool call,
// turn 1 makes step 1's, and once the steps run out the model says "done".
// A step may carry `before`, an action the suite runs once just before the
// model makes that call (pause the session, stop the backend, ...).

export type Action =
  /** A shell command: Codex `exec_command {cmd}`, Claude `Bash {command}`. */
  | { kind: "shell"; command: string }
  /** Create a new file: Codex `apply_patch` (Add File), Claude `Write` (absolute path). */
  | { kind: "write"; path: string; content: string }
  /** A raw Codex `apply_patch` custom tool call. */
  | { kind: "patch"; patch: string }
  /** Any other Codex function call, e.g. `write_stdin`. */
  | { kind: "codex-call"; name: string; args: Record<string, unknown> }
  /** A raw Responses output item (call_id is filled in), e.g. `tool_search_call`. */
  | { kind: "codex-item"; item: Record<string, unknown> }
  /** Any other Claude Code tool, e.g. `Read`, `Edit` (paths absolute). */
  | { kind: "claude-call"; name: string; input: Record<string, unknown> }
  /**
   * Claude: the model ends its turn with this text and no tool call. The
   * request that wakes the agent again (a background command of its own
   * finished) goes on with the next step: the fake counts the text-only
   * turns in the conversation (`ended`) besides the tool results.
   */
  | { kind: "end-turn"; text: string }
  /** Copilot, Gemini, OpenCode: a function call by the client's own tool name, arguments as the model sends them. */
  | { kind: "tool"; name: string; args: Record<string, unknown> }
  /** Copilot: a custom (free-form) tool call, e.g. its patch tool; `input` is the raw text. */
  | { kind: "custom-tool"; name: string; input: string };

export interface Step {
  /** Names the step in assertions and reports. */
  id: string;
  /** The call; a function gets the tool results so far (e.g. to reuse a terminal session id). */
  action: Action | ((outputs: string[]) => Action);
  before?: () => Promise<void> | void;
}

/** A tool call as the model server emits it: one per turn. */
export interface ModelTurn {
  step: Step | null;
  action: Action | null;
  /** The tool call id, `call_<n>` / `toolu_<n>`; null for the final message. */
  callId: string | null;
}

export class Script {
  private readonly ran = new Set<number>();
  /** Errors thrown by `before` actions: the suite fails on them. */
  readonly errors: unknown[] = [];
  constructor(readonly steps: Step[]) {}

  /** The turn for a request that carries these tool results, in order, after `ended` turns that ended without a call. */
  async turn(outputs: string[], idPrefix: string, ended = 0): Promise<ModelTurn> {
    const index = outputs.length + ended;
    const step = this.steps[index] ?? null;
    if (!step) return { step: null, action: null, callId: null };
    if (step.before && !this.ran.has(index)) {
      this.ran.add(index);
      try {
        await step.before();
      } catch (err) {
        this.errors.push(err);
      }
    }
    const action = typeof step.action === "function" ? step.action(outputs) : step.action;
    return {
      step,
      action,
      callId: `${idPrefix}${index + 1}_${step.id.replace(/[^A-Za-z0-9_]/g, "_")}`,
    };
  }

  callIdOf(stepId: string, idPrefix: string): string {
    const i = this.steps.findIndex((s) => s.id === stepId);
    if (i === -1) throw new Error(`no step ${stepId}`);
    return `${idPrefix}${i + 1}_${stepId.replace(/[^A-Za-z0-9_]/g, "_")}`;
  }
}

/** What one fake server saw: every request, in order. */
export interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}
