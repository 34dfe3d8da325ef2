import { wrapsFailure, type Check } from "./doctor-hosts.js";
import type { CodexFiles, JsonFile } from "./doctor-gather.js";
import { CLAUDE_HOOKS, CODEX_HOOKS } from "./init.js";
import { declaredHooks, hookTrust, isCohentHook, parseCodexTrust, type HookTrust } from "./trust.js";

/**
 * Part of doctor's decide step (doctor-decide.ts), pure: the checks on the
 * checkout's hook files as doctor-gather.ts read them: whether Codex will run
 * the hooks (project trust and each hook's trust hash), whether Claude Code's
 * settings wire them, whether both fail closed, which entry they run, and
 * Cohent's MCP entry for Codex.
 */

type Status = Check["status"];

export interface CodexReport {
  home: string;
  projectTrust: string | null;
  hooks: {
    key: string;
    event: string;
    command: string;
    ours: boolean;
    trust: HookTrust;
    expected: string;
    recorded: string | null;
  }[];
  hooksNewerThanTrust: boolean;
}

export function codexReport(
  root: string,
  files: CodexFiles,
): { report: CodexReport | null; checks: Check[] } {
  const { hooksFile, hooks: file, trust } = files;
  const checks: Check[] = [];
  if (!file.exists)
    return {
      report: null,
      checks: [
        { name: "codex hooks", status: "fail", detail: ".codex/hooks.json is missing; run npx cohent init." },
      ],
    };
  if (!file.parsed || !trust)
    return {
      report: null,
      checks: [
        {
          name: "codex hooks",
          status: "fail",
          detail: ".codex/hooks.json is not valid JSON: Codex loads no hook from it.",
        },
      ],
    };
  const { home, tomlFile, hooksNewerThanTrust } = trust;
  const store = parseCodexTrust(trust.toml);
  const declared = declaredHooks(hooksFile, file.value);
  const hooks = declared.map((h) => ({
    key: h.key,
    event: h.event,
    command: h.command,
    ours: isCohentHook(h.command),
    trust: hookTrust(h, store),
    expected: h.hash,
    recorded: store.hookState[h.key]?.trusted_hash ?? null,
  }));
  const projectTrust = store.projects[root]?.trust_level ?? null;
  checks.push(
    projectTrust === "trusted"
      ? { name: "codex project trust", status: "ok", detail: `${root} is trusted in ${tomlFile}.` }
      : {
          name: "codex project trust",
          status: "fail",
          detail: `${root} is ${projectTrust ?? "not trusted"} in ${tomlFile}: Codex does not load .codex/hooks.json at all. Open codex in this directory and trust it.`,
        },
  );
  // The events init wires (init.ts CODEX_HOOKS), not a list of doctor's own.
  const missing = CODEX_HOOKS.map((h) => h.event).filter((e) => !hooks.some((h) => h.ours && h.event === e));
  if (missing.length)
    checks.push({
      name: "codex hooks declared",
      status: "fail",
      detail: `.codex/hooks.json does not run the adapter on ${missing.join(", ")}; run npx cohent init.`,
    });
  for (const h of hooks.filter((x) => x.ours)) {
    const status: Status = h.trust === "trusted" ? "ok" : "fail";
    const why = {
      trusted: "trusted",
      modified:
        "MODIFIED since it was trusted: Codex skips it silently. Open the Codex TUI here and trust the hooks again",
      untrusted: "not trusted yet: Codex skips it. Open the Codex TUI here and press t to trust all hooks",
      disabled: "disabled in config.toml",
    }[h.trust];
    checks.push({ name: `codex ${h.event} hook`, status, detail: `${h.key}: ${why}.` });
  }
  if (hooksNewerThanTrust)
    checks.push({
      name: "codex trust freshness",
      status: "warn",
      detail: `.codex/hooks.json is newer than ${tomlFile}: if it changed after you trusted the hooks, Codex will skip them until you trust them again.`,
    });
  return { report: { home, projectTrust, hooks, hooksNewerThanTrust }, checks };
}

/** The Cohent handlers of a hooks file's PreToolUse groups; none when it is missing or broken. */
function preToolUse(file: JsonFile): any[] {
  try {
    if (!file.parsed) return [];
    const groups = file.value?.hooks?.PreToolUse;
    return (Array.isArray(groups) ? groups : [])
      .flatMap((g: any) => (Array.isArray(g?.hooks) ? g.hooks : []))
      .filter((h: any) => isCohentHook(h?.command));
  } catch {
    return [];
  }
}

/**
 * Whether each client's PreToolUse wiring in this checkout fails closed
 * (docs/clients.md: a hook that cannot start, exits 1 or times out
 * lets the tool run). Claude Code also wants onFailure "block", honoured from
 * 2.1.295, for a hook its own timeout kills.
 */
export function failClosedChecks(codexHooks: JsonFile, claudeSettings: JsonFile): Check[] {
  const out: Check[] = [];
  const repair = "run npx cohent init to upgrade the wiring";
  const codex = preToolUse(codexHooks);
  out.push(
    codex.length && codex.every((h: any) => wrapsFailure(h.command))
      ? {
          name: "codex fails closed",
          status: "ok",
          detail:
            "the PreToolUse hook refuses the tool call when the adapter is missing, crashes or cannot find node; the adapter's own deadline answers before the hook timeout.",
        }
      : {
          name: "codex fails closed",
          status: "fail",
          detail: `the PreToolUse hook in .codex/hooks.json fails OPEN: if the adapter is missing, crashes or hangs, Codex runs the tool anyway; ${repair} (then trust the changed hook in the Codex TUI).`,
        },
  );
  const claude = preToolUse(claudeSettings);
  const wrapped = claude.length > 0 && claude.every((h: any) => wrapsFailure(h.command));
  const block = wrapped && claude.every((h: any) => h.onFailure === "block");
  out.push(
    block
      ? {
          name: "claude fails closed",
          status: "ok",
          detail:
            'the PreToolUse hook refuses the tool call when the adapter fails, and carries onFailure "block" (Claude Code 2.1.295 and later also refuse when the hook timeout fires).',
        }
      : wrapped
        ? {
            name: "claude fails closed",
            status: "warn",
            detail: `the PreToolUse hook refuses on adapter failure but lacks onFailure "block"; ${repair}.`,
          }
        : {
            name: "claude fails closed",
            status: "fail",
            detail: `the PreToolUse hook in .claude/settings.json fails OPEN: if the adapter is missing, crashes or hangs, Claude Code runs the tool anyway; ${repair}.`,
          },
  );
  return out;
}

/**
 * Whether the hooks run cohent.cjs, as init wires them now, or the cohent.mjs
 * entry of earlier releases: that works, but Node's ES module loader costs
 * each hook process ~8 ms (bench/adapter-coldstart.ts).
 */
export function hookEntryCheck(files: [string, JsonFile][]): Check {
  const old: string[] = [];
  for (const [file, json] of files) {
    try {
      if (!json.parsed) continue; // a missing or broken file is the other checks' to report
      const hooks = json.value?.hooks ?? {};
      const commands = Object.values(hooks)
        .flatMap((groups: any) => (Array.isArray(groups) ? groups : []))
        .flatMap((g: any) => (Array.isArray(g?.hooks) ? g.hooks : []))
        .map((h: any) => h?.command)
        .filter(isCohentHook);
      // The runner, not the wrapper's refusal text (which names `node .cohent/cohent.mjs doctor`).
      if (commands.some((c) => /\.cohent\/cohent\.mjs"? hook\b/.test(c))) old.push(file);
    } catch {
      /* a missing or broken file is the other checks' to report */
    }
  }
  return old.length
    ? {
        name: "hook entry",
        status: "warn",
        detail: `${old.join(" and ")} run .cohent/cohent.mjs, the entry of earlier releases: it works, but costs every tool call ~8 ms more than .cohent/cohent.cjs. Run cohent init --upgrade (then trust the changed Codex hooks in the Codex TUI).`,
      }
    : { name: "hook entry", status: "ok", detail: "the hooks run .cohent/cohent.cjs." };
}

/**
 * Cohent's MCP server for Codex. Measured (0.169.0, 0.171.0): Codex starts
 * MCP servers outside its workspace-write sandbox, so the server reaches the
 * service even where the agent's own shell has no network.
 */
export function codexMcpCheck(file: string | null): Check | null {
  if (!file) return null;
  return {
    name: "codex mcp",
    status: "ok",
    detail: `[mcp_servers.cohent] in ${file}: Codex starts MCP servers outside its workspace-write sandbox, so the server reaches the service there (the agent's own shell does not). Under approval policy "never" (codex exec) an MCP call is refused unless the entry sets default_tools_approval_mode = "approve".`,
  };
}

export function claudeCheck(file: JsonFile): Check {
  if (!file.parsed)
    return {
      name: "claude hooks",
      status: "fail",
      detail: ".claude/settings.json is missing or not JSON; run npx cohent init.",
    };
  const settings = file.value;
  // Every entry init wires (init.ts CLAUDE_HOOKS): an event init matches on every tool needs a group that does too.
  const everyTool = (m: unknown) => m === undefined || m === "" || m === "*" || m === ".*";
  const missing = CLAUDE_HOOKS.filter(({ event, matcher }) => {
    const groups = Array.isArray(settings?.hooks?.[event]) ? settings.hooks[event] : [];
    return !groups.some(
      (g: any) =>
        (matcher === undefined || everyTool(g?.matcher)) &&
        Array.isArray(g?.hooks) &&
        g.hooks.some((h: any) => isCohentHook(h?.command) && /\bhook\b/.test(h.command)),
    );
  }).map((h) => h.event);
  return missing.length
    ? {
        name: "claude hooks",
        status: "fail",
        detail: `.claude/settings.json does not run the adapter on every tool for ${missing.join(", ")}; run npx cohent init.`,
      }
    : {
        name: "claude hooks",
        status: "ok",
        detail: `every event init wires runs the adapter (${CLAUDE_HOOKS.map((h) => h.event).join(", ")}).`,
      };
}
