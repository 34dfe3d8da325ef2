// The pinned real clients the conformance suite runs, and where they live.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export type ClientKind = "codex" | "claude" | "copilot" | "gemini" | "opencode";

export interface ClientSpec {
  kind: ClientKind;
  pkg: string;
  version: string;
  /** `codex@0.169.0`: the label used in reports. */
  label: string;
  /**
   * A version run only when COHENT_CLIENTS names its label, and then only these scenarios: one
   * between the pinned ones, where a behaviour changed (issue 49: Claude Code honours onFailure from 2.1.328).
   */
  between?: string[];
}

export const CLIENTS: ClientSpec[] = [
  { kind: "codex", pkg: "@openai/codex", version: "0.169.0", label: "codex@0.169.0" },
  { kind: "codex", pkg: "@openai/codex", version: "0.171.0", label: "codex@0.171.0" },
  { kind: "claude", pkg: "@anthropic-ai/claude-code", version: "2.1.197", label: "claude@2.1.197" },
  { kind: "claude", pkg: "@anthropic-ai/claude-code", version: "2.1.332", label: "claude@2.1.332" },
  // Older than 2.1.328, so it ignores onFailure, like 2.1.197 but newer (issue 49 item 1).
  {
    kind: "claude",
    pkg: "@anthropic-ai/claude-code",
    version: "2.1.310",
    label: "claude@2.1.310",
    between: ["spawn-free-forged-", "hooks-off-"],
  },
  // Issue 24: the newest that runs on Node 20 and one a few releases back that has the same hook API
  // (Copilot 1.0.65–1.0.73 are reported broken for hooks). See MORE-CLIENTS-MEASURED.md.
  { kind: "copilot", pkg: "@github/copilot", version: "1.0.85", label: "copilot@1.0.85" },
  { kind: "copilot", pkg: "@github/copilot", version: "1.0.102", label: "copilot@1.0.102" },
  { kind: "gemini", pkg: "@google/gemini-cli", version: "0.58.0", label: "gemini@0.58.0" },
  { kind: "gemini", pkg: "@google/gemini-cli", version: "0.61.0", label: "gemini@0.61.0" },
  { kind: "opencode", pkg: "opencode-ai", version: "1.15.13", label: "opencode@1.15.13" },
  { kind: "opencode", pkg: "opencode-ai", version: "1.18.33", label: "opencode@1.18.33" },
];

/** The executable each package puts in node_modules/.bin. */
const BIN: Record<ClientKind, string> = {
  codex: "codex",
  claude: "claude",
  copilot: "copilot",
  gemini: "gemini",
  opencode: "opencode",
};

export function cacheRoot(): string {
  return process.env.COHENT_CLIENTS_CACHE || join(homedir(), ".cache", "cohent-clients");
}

/** Folder of one install: <cache>/<pkg name without scope>@<version>. */
export function installDir(c: ClientSpec): string {
  const bare = c.pkg.split("/").pop()!;
  return join(cacheRoot(), `${bare}@${c.version}`);
}

/** The client's executable inside its install folder. */
export function binPath(c: ClientSpec): string {
  return join(installDir(c), "node_modules", ".bin", BIN[c.kind]);
}

export function isInstalled(c: ClientSpec): boolean {
  return existsSync(join(installDir(c), ".cohent-installed")) && existsSync(binPath(c));
}

/** Clients selected by COHENT_CLIENTS (comma list of labels or kinds; default all). */
export function selectedClients(): ClientSpec[] {
  const sel = (process.env.COHENT_CLIENTS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (sel.length === 0) return CLIENTS.filter((c) => !c.between);
  return CLIENTS.filter(
    (c) =>
      sel.includes(c.label) || sel.includes(`${c.kind}@${c.version}`) || (!c.between && sel.includes(c.kind)),
  );
}
