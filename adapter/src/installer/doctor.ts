import { existsSync, readFileSync, statSync } from "node:fs";
import { shellWritesCheck } from "./doctor-shell.js";
import { join } from "node:path";
import { credentialsFile, findRoot, readCredential, readProject, type Project } from "../state/config.js";
import { ok } from "../envelope.js";
import { childProcess } from "../builtins.js";
import { connection, openCheckout } from "../service/client.js";
import { health, postAgent } from "../service/http.js";
import { readRuntime } from "../state/runtime.js";
import { declaredHooks, hookTrust, isCohentHook, parseCodexTrust, type HookTrust } from "./trust.js";
import { adapterVersionVerdict, recordedVersionVerdict } from "../service/version.js";
import { readWiring, reportState, type WiringState } from "./wiring-check.js";
import { describeChanges } from "./wiring.js";
import { clientName, clientSummary, clientWiring, wrapsFailure, type ClientWiring } from "./doctor-hosts.js";
import { CLAUDE_HOOKS, CODEX_HOOKS } from "./init.js";

/**
 * `doctor`: tells the truth about whether this checkout is guarded: the
 * project, the endpoint, the pairing, whether Codex will run the hooks
 * (project trust and each hook's trust hash), whether Claude Code's
 * settings wire them, each other client's wiring and trust gate
 * (doctor-hosts.ts), and whether `node` resolves in the login shell that
 * Codex's shell tool uses.
 */

type Status = "ok" | "warn" | "fail";
interface Check {
  name: string;
  status: Status;
  detail: string;
}

function readJson(file: string): any {
  return JSON.parse(readFileSync(file, "utf8"));
}

function codexHome(): string {
  return process.env.CODEX_HOME || join(process.env.HOME ?? "", ".codex");
}

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

export function codexReport(root: string): { report: CodexReport | null; checks: Check[] } {
  const hooksFile = join(root, ".codex", "hooks.json");
  const checks: Check[] = [];
  if (!existsSync(hooksFile))
    return {
      report: null,
      checks: [
        { name: "codex hooks", status: "fail", detail: ".codex/hooks.json is missing; run npx cohent init." },
      ],
    };
  let config: any;
  try {
    config = readJson(hooksFile);
  } catch {
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
  }
  const home = codexHome();
  const tomlFile = join(home, "config.toml");
  const toml = existsSync(tomlFile) ? readFileSync(tomlFile, "utf8") : "";
  const store = parseCodexTrust(toml);
  const declared = declaredHooks(hooksFile, config);
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
  const hooksNewerThanTrust =
    existsSync(tomlFile) && statSync(hooksFile).mtimeMs > statSync(tomlFile).mtimeMs;
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

export { wrapsFailure };

/**
 * Whether each client's PreToolUse wiring in this checkout fails closed
 * (shared/clients/FACTS.md: a hook that cannot start, exits 1 or times out
 * lets the tool run). Claude Code also wants onFailure "block", honoured from
 * 2.1.295, for a hook its own timeout kills.
 */
export function failClosedChecks(root: string): Check[] {
  const out: Check[] = [];
  const pre = (file: string) => {
    try {
      const groups = readJson(join(root, file))?.hooks?.PreToolUse;
      return (Array.isArray(groups) ? groups : [])
        .flatMap((g: any) => (Array.isArray(g?.hooks) ? g.hooks : []))
        .filter((h: any) => isCohentHook(h?.command));
    } catch {
      return [];
    }
  };
  const repair = "run npx cohent init to upgrade the wiring";
  const codex = pre(".codex/hooks.json");
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
  const claude = pre(".claude/settings.json");
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
export function hookEntryCheck(root: string): Check {
  const old: string[] = [];
  for (const file of [".codex/hooks.json", ".claude/settings.json"]) {
    try {
      const hooks = readJson(join(root, file))?.hooks ?? {};
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
export function codexMcpCheck(root: string): Check | null {
  const files = [join(root, ".codex", "config.toml"), join(codexHome(), "config.toml")];
  const file = files.find(
    (f) => existsSync(f) && /^\s*\[mcp_servers\.cohent\]\s*$/m.test(readFileSync(f, "utf8")),
  );
  if (!file) return null;
  return {
    name: "codex mcp",
    status: "ok",
    detail: `[mcp_servers.cohent] in ${file}: Codex starts MCP servers outside its workspace-write sandbox, so the server reaches the service there (the agent's own shell does not). Under approval policy "never" (codex exec) an MCP call is refused unless the entry sets default_tools_approval_mode = "approve".`,
  };
}

export function claudeCheck(root: string): Check {
  const file = join(root, ".claude", "settings.json");
  let settings: any;
  try {
    settings = readJson(file);
  } catch {
    return {
      name: "claude hooks",
      status: "fail",
      detail: ".claude/settings.json is missing or not JSON; run npx cohent init.",
    };
  }
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

/**
 * The guard wiring against what init wrote (wiring.ts): which file differs
 * and how, and what a person does about it. The checkout's own adapter runs
 * this check; a replaced .cohent/cohent.cjs cannot vouch for itself, so the
 * repair runs the installed package when the adapter itself changed.
 */
export function wiringCheck(state: WiringState): Check {
  if (state.changes === null)
    return {
      name: "guard wiring",
      status: "warn",
      detail:
        ".cohent/project.json records no adapter version or file hashes (not written by cohent init, or by a release before it recorded them), so a modified wiring goes unnoticed. Run cohent init --upgrade and commit.",
    };
  if (state.changes.length === 0)
    return {
      name: "guard wiring",
      status: "ok",
      detail:
        "as cohent init wrote it: the adapter files match the hashes in .cohent/project.json, and the hook entries, managed sections and MCP entries match init's.",
    };
  const adapterItself = state.changes.some((c) => /^\.cohent\/cohent\.(cjs|mjs)$/.test(c.file));
  return {
    name: "guard wiring",
    status: "fail",
    detail: `MODIFIED since cohent init wrote it: ${describeChanges(state.changes)}. The guard's own files are not the agents' to change, and the Control Room shows this checkout as "guard wiring modified". A person restores them: ${
      adapterItself
        ? "npx cohent init --upgrade (the installed package: the checkout's own adapter changed, and cannot vouch for itself)"
        : "node .cohent/cohent.mjs init --upgrade (or npx cohent init --upgrade)"
    }, reviews git diff, and commits.`,
  };
}

export function loginShellNode(): Check {
  const shell = process.env.SHELL && existsSync(process.env.SHELL) ? process.env.SHELL : "/bin/sh";
  try {
    const out = childProcess()
      .execFileSync(shell, ["-lc", "command -v node"], {
        stdio: ["ignore", "pipe", "ignore"],
        timeout: 10_000,
        env: { HOME: process.env.HOME ?? "", USER: process.env.USER ?? "", SHELL: shell },
      })
      .toString()
      .trim();
    if (out)
      return {
        name: "node in a login shell",
        status: "ok",
        detail: `${shell} -lc resolves node to ${out.split("\n").pop()}.`,
      };
  } catch {
    /* not found */
  }
  return {
    name: "node in a login shell",
    status: "fail",
    detail: `${shell} -lc does not find node. Codex's shell tool runs a login shell with the system PATH, so the agent cannot run node .cohent/cohent.mjs. Install node system-wide, or put it on PATH in your login profile (~/.profile).`,
  };
}

export async function doctor(_args: string[], json: boolean, scriptUrl: string): Promise<number> {
  const checks: Check[] = [];
  const root = findRoot(process.cwd(), scriptUrl);
  let project: Project | null = null;
  let codex: CodexReport | null = null;
  let wiring: WiringState | null = null;
  let clients: ClientWiring[] = [];
  /** Whether the service now has this checkout's wiring state (doctor tells it, which clears a repaired one). */
  let wiringReported = false;
  const sessions: {
    id: string;
    client: string | null;
    model: string | null;
    intentId: string | null;
    action: string | null;
    control: string;
    scope: string[];
    lastCall: string;
    live: boolean;
  }[] = [];
  if (!root)
    checks.push({
      name: "project",
      status: "fail",
      detail: "no .cohent/project.json here or above; run npx cohent init --server URL.",
    });
  else {
    try {
      project = readProject(root);
      checks.push({
        name: "project",
        status: "ok",
        detail: `${project.repository} at ${project.service} (${root}).`,
      });
    } catch (err) {
      checks.push({ name: "project", status: "fail", detail: (err as Error).message });
    }
  }
  if (project) {
    const env = await health(project.service, 5_000);
    checks.push(
      env.ok
        ? { name: "endpoint", status: "ok", detail: `${project.service} answers.` }
        : { name: "endpoint", status: "fail", detail: env.error!.message },
    );
    // Upgrades: this adapter against what the server accepts, and against what project.json records.
    for (const v of [
      env.ok ? adapterVersionVerdict(env.meta) : null,
      recordedVersionVerdict(readJson(join(root!, ".cohent", "project.json"))?.adapterVersion),
    ]) {
      if (v) checks.push({ name: "adapter version", ...v });
    }
    if (process.env.COHENT_AGENT_TOKEN)
      checks.push({
        name: "pairing",
        status: "ok",
        detail: "COHENT_AGENT_TOKEN is set and overrides the credential store.",
      });
    else if (readCredential(project)) {
      const mode = statSync(credentialsFile()).mode & 0o777;
      checks.push({
        name: "pairing",
        status: mode & 0o077 ? "warn" : "ok",
        detail: `paired: credential in ${credentialsFile()}${mode & 0o077 ? ` is readable by others (mode ${mode.toString(8)}); chmod 600 it` : ""}.`,
      });
    } else
      checks.push({
        name: "pairing",
        status: "fail",
        detail: `not paired on this machine; run node .cohent/cohent.mjs bootstrap --approve.`,
      });
  }
  if (root) {
    const c = codexReport(root);
    codex = c.report;
    checks.push(...c.checks);
    checks.push(claudeCheck(root));
    checks.push(...failClosedChecks(root), hookEntryCheck(root));
    const mcp = codexMcpCheck(root);
    if (mcp) checks.push(mcp);
    wiring = readWiring(root);
    checks.push(wiringCheck(wiring), shellWritesCheck(root));
    const hosts = clientWiring(root, wiring.changes);
    clients = hosts.clients;
    checks.push(...hosts.checks);
    const rt = readRuntime(root);
    for (const [id, s] of Object.entries(rt.sessions)) {
      sessions.push({
        id,
        client: s.client,
        model: s.model,
        intentId: s.intentId ?? null,
        action: s.action ?? null,
        control: s.control,
        scope: s.scope,
        lastCall: s.seenAt,
        live: !s.endedAt && Date.now() - Date.parse(s.seenAt) < 10 * 60_000,
      });
    }
  }
  // The server's view of this person's work: each open intent with its session's guard status. Asked
  // from a session of doctor's own, so that asking renews nobody else's lease.
  let work: {
    person: string;
    intents: {
      intentId: string;
      sessionKey: string;
      client: string | null;
      model: string | null;
      state: string;
      action: string;
      guard: string;
      control: string;
      lastCallAt: string;
      objective: string | null;
    }[];
  } | null = null;
  if (root && project && checks.every((c) => c.name !== "pairing" || c.status !== "fail")) {
    try {
      const checkout = openCheckout(root);
      const doctorSession = `doctor-${process.env.USER ?? "user"}`;
      const env = await postAgent(
        { ...connection(checkout, doctorSession), timeoutMs: 5_000 },
        { type: "status" },
      );
      if (env.ok) {
        work = env.data;
        if (wiring)
          wiringReported = await reportState(
            root,
            checkout,
            doctorSession,
            "doctor",
            wiring,
            readRuntime(root),
            {
              always: true,
              timeoutMs: 5_000,
            },
          );
        checks.push({
          name: "credential",
          status: "ok",
          detail: `accepted by the service for ${env.data.person}.`,
        });
      } else if (env.error?.code !== "CONTROL_PLANE_UNREACHABLE") {
        checks.push({
          name: "credential",
          status: "fail",
          detail: `${env.error!.code}: ${env.error!.message} Pair again: node .cohent/cohent.mjs bootstrap --approve.`,
        });
      }
    } catch (err) {
      checks.push({ name: "credential", status: "fail", detail: (err as Error).message });
    }
  }
  checks.push(loginShellNode());

  const failed = checks.some((c) => c.status === "fail");
  const data = {
    root,
    project,
    checks,
    codex,
    sessions,
    work,
    guarded: {
      codex:
        !!codex &&
        codex.projectTrust === "trusted" &&
        codex.hooks.filter((h) => h.ours).every((h) => h.trust === "trusted") &&
        codex.hooks.some((h) => h.ours),
      claude: checks.some((c) => c.name === "claude hooks" && c.status === "ok"),
      ...Object.fromEntries(clients.map((c) => [c.host, c.wired && c.hooksRun !== false])),
    },
    failsClosed: {
      codex: checks.some((c) => c.name === "codex fails closed" && c.status === "ok"),
      claude: checks.some((c) => c.name === "claude fails closed" && c.status === "ok"),
      ...Object.fromEntries(clients.map((c) => [c.host, c.failsClosed])),
    },
    clients,
    wiring: wiring && { changes: wiring.changes, reported: wiringReported },
  };
  if (json) process.stdout.write(JSON.stringify(ok("doctor", data)) + "\n");
  else {
    const mark = { ok: "ok  ", warn: "warn", fail: "FAIL" };
    const lines = checks.map((c) => `${mark[c.status]}  ${c.name}: ${c.detail}`);
    lines.push(
      "",
      `Codex will run the hooks here: ${data.guarded.codex ? "yes" : "NO"}. Claude Code hooks wired: ${data.guarded.claude ? "yes" : "NO"}.`,
    );
    lines.push(
      `Fails closed when the adapter itself fails: Codex ${data.failsClosed.codex ? "yes" : "NO"}, Claude Code ${data.failsClosed.claude ? "yes" : "NO"}${clients.map((c) => `, ${clientName(c.host)} ${c.failsClosed ? "yes" : "NO"}`).join("")}.`,
      ...clientSummary(clients),
    );
    if (work) {
      lines.push(
        "",
        work.intents.length
          ? `Work intents of ${work.person}, with the guard status the service sees:`
          : `No open work intents for ${work.person}.`,
      );
      for (const i of work.intents) {
        lines.push(
          `  ${i.intentId}  ${i.guard}${i.control === "active" ? "" : ` (${i.control})`}  ${i.action}  ${[i.client, i.model].filter(Boolean).join(" ") || "-"}  session ${i.sessionKey}  last call ${i.lastCallAt}${i.objective ? `  ${JSON.stringify(i.objective)}` : ""}`,
        );
      }
    }
    if (sessions.length) {
      lines.push("", "Sessions in this checkout (local view):");
      for (const s of sessions)
        lines.push(
          `  ${s.id}  ${[s.client, s.model].filter(Boolean).join(" ") || "-"}  ${s.intentId ?? "no intent"}  ${s.action ?? "-"}  ${s.control}  last call ${s.lastCall}${s.live ? "" : " (not live)"}`,
        );
    }
    process.stdout.write(lines.join("\n") + "\n");
  }
  return failed ? 1 : 0;
}
