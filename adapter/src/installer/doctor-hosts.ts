import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { WiringChange } from "@cohent/protocol";
import { HOSTS, type Host as AnyHost } from "@cohent/protocol/hosts";
import { childProcess, os } from "@cohent/client";
import { DEADLINE_MS } from "../transports/deadline.js";
import { COPILOT_HOOKS_DIR, OPENCODE_PLUGIN_DIR, OPENCODE_PLUGINS_DIR } from "../guard/guard-files.js";
import {
  COPILOT_HOOKS_FILE,
  COPILOT_SETTINGS_FILES,
  CURSOR_HOOKS_FILE,
  GEMINI_SETTINGS_FILE,
} from "./host-wiring.js";
import { OPENCODE_PLUGIN_FILE } from "./opencode-plugin.js";
import { isCohentHook } from "./trust.js";
import { describeChanges } from "./wiring.js";

/**
 * doctor, for the clients beyond Codex and Claude Code: per client, whether
 * the wiring init writes is there and intact, whether it fails closed as
 * init wrote it, and the trust gate that decides whether the client runs it
 * at all, where one can be read (docs/clients.md). An untrusted
 * folder is a warning, not a failure: the person may not use that client,
 * but one who does gets no hook and no word about it from the client.
 */

type Status = "ok" | "warn" | "fail";
export interface Check {
  name: string;
  status: Status;
  detail: string;
}

/** The clients beyond Codex and Claude Code, whose wiring this file checks. */
export type Host = Exclude<AnyHost, "codex" | "claude">;

export interface ClientWiring {
  host: Host;
  /** The wiring init writes for this client is there and matches init's. */
  wired: boolean;
  /** As wired, a failure of the adapter (missing, crashing, no node, hanging) refuses the call. */
  failsClosed: boolean;
  /** The fingerprint's changes in this client's files. */
  changes: WiringChange[];
  /** Whether the client runs the project's hooks here: null when Cohent cannot read its gate. */
  hooksRun: boolean | null;
  /** The trust gate in one sentence. */
  trust: string;
}

const readJson = (file: string): any => {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
};

/** A path with symlinks resolved, as the clients compare folders. */
const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/** `inner` is `outer` or inside it. */
const within = (outer: string, inner: string) => {
  const o = real(outer).replace(/[\\/]+$/, "");
  const i = real(inner);
  return i === o || i.startsWith(o + "/") || i.startsWith(o + "\\");
};

const sec = (ms: number) => `${Math.round(ms / 1000)} s`;

// ---- Copilot CLI -------------------------------------------------------------------------------

/**
 * Copilot's saved folder trust: `trustedFolders` in $COPILOT_HOME/config.json
 * (default ~/.copilot), a folder and everything under it, `//` comment lines
 * allowed; COPILOT_ALLOW_ALL=true trusts the working directory (measured,
 * 1.0.85 and 1.0.102). Untrusted, Copilot runs no repository hook at all and
 * says nothing.
 */
export function copilotTrust(
  root: string,
  env: NodeJS.ProcessEnv,
  home: string,
): { hooksRun: boolean; trust: string } {
  if (env.COPILOT_ALLOW_ALL === "true")
    return {
      hooksRun: true,
      trust: "COPILOT_ALLOW_ALL=true trusts the working folder (in this environment).",
    };
  const file = join(env.COPILOT_HOME || join(home, ".copilot"), "config.json");
  let folders: unknown = null;
  try {
    const text = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => !l.trimStart().startsWith("//"))
      .join("\n");
    folders = JSON.parse(text)?.trustedFolders;
  } catch {
    /* untrusted below */
  }
  const by = Array.isArray(folders)
    ? folders.find((f): f is string => typeof f === "string" && within(f, root))
    : undefined;
  return by
    ? { hooksRun: true, trust: `the folder is trusted in ${file} (${by}).` }
    : {
        hooksRun: false,
        trust: `the folder is NOT trusted in ${file}: Copilot CLI runs no hook of .github/hooks here and says nothing, so its agents work unguarded. Trust it once (copilot in this folder answers the trust prompt; 1.0.102 also takes --trust-folder).`,
      };
}

function copilotFailsClosed(root: string): boolean {
  const config = readJson(join(root, COPILOT_HOOKS_FILE));
  if (!config || config.disableAllHooks) return false;
  const pre: any[] = Array.isArray(config.hooks?.preToolUse) ? config.hooks.preToolUse : [];
  const ours = pre.filter((h) => isCohentHook(h?.bash));
  // Command hooks only (HTTP hooks fail open), and a timeout the adapter's deadline answers within.
  return (
    ours.length > 0 &&
    ours.every(
      (h) =>
        (h.type === undefined || h.type === "command") &&
        typeof h.timeoutSec === "number" &&
        h.timeoutSec * 1000 > DEADLINE_MS,
    )
  );
}

// ---- Gemini CLI --------------------------------------------------------------------------------

/**
 * Gemini's folder trust, in its own order (read off 0.58.0/0.61.0):
 * GEMINI_RESTRICTED_MODE=true or GEMINI_CLI_TRUST_WORKSPACE=false untrust,
 * GEMINI_CLI_TRUST_WORKSPACE=true trusts, `security.folderTrust.enabled:
 * false` in the user settings trusts every folder, else the longest rule of
 * trustedFolders.json that covers the folder (TRUST_FOLDER, TRUST_PARENT:
 * the rule path's parent, DO_NOT_TRUST); no rule: untrusted, and a headless
 * run exits 55 before any hook. `hooksConfig.enabled: false` in the user
 * settings runs no hook at all.
 */
export function geminiTrust(
  root: string,
  env: NodeJS.ProcessEnv,
  home: string,
): { hooksRun: boolean; trust: string } {
  const gHome = join(env.GEMINI_CLI_HOME || home, ".gemini");
  const settingsFile = join(gHome, "settings.json");
  const user = readJson(settingsFile) ?? {};
  const caveat =
    " `gemini --skip-trust` runs the agent with the project's hooks NOT loaded (unguarded, silently), and so does a gemini started in a subfolder of the checkout (it reads .gemini/settings.json of its working folder only; measured).";
  if (user?.hooksConfig?.enabled === false)
    return {
      hooksRun: false,
      trust: `hooksConfig.enabled is false in ${settingsFile}: Gemini CLI runs no hook at all, so its agents work unguarded.`,
    };
  let trusted: boolean | undefined;
  let why = "";
  if (env.GEMINI_RESTRICTED_MODE === "true" || env.GEMINI_CLI_TRUST_WORKSPACE === "false") {
    trusted = false;
    why =
      "GEMINI_RESTRICTED_MODE or GEMINI_CLI_TRUST_WORKSPACE=false untrusts every folder (in this environment)";
  } else if (env.GEMINI_CLI_TRUST_WORKSPACE === "true") {
    trusted = true;
    why = "GEMINI_CLI_TRUST_WORKSPACE=true trusts the folder (in this environment)";
  } else if (user?.security?.folderTrust?.enabled === false) {
    trusted = true;
    why = `security.folderTrust.enabled is false in ${settingsFile}: every folder counts as trusted`;
  } else {
    const file = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || join(gHome, "trustedFolders.json");
    const rules = readJson(file);
    let best = -1;
    for (const [path, level] of Object.entries(rules && typeof rules === "object" ? rules : {})) {
      const effective = level === "TRUST_PARENT" ? dirname(path) : path;
      if (!within(effective, root) || path.length <= best) continue;
      if (level === "TRUST_FOLDER" || level === "TRUST_PARENT" || level === "DO_NOT_TRUST") {
        best = path.length;
        trusted = level !== "DO_NOT_TRUST";
        why = `${file} says ${level} for ${path}`;
      }
    }
    if (trusted === undefined) {
      trusted = false;
      why = `no rule of ${file} covers it`;
    }
  }
  return trusted
    ? { hooksRun: true, trust: `the folder is trusted: ${why}.${caveat}` }
    : {
        hooksRun: false,
        trust: `the folder is NOT trusted (${why}): Gemini CLI loads no project hook here; run headless it exits 55 before any tool call, interactively it asks. Trust it in gemini once, or add it to trustedFolders.json.${caveat}`,
      };
}

function geminiFailsClosed(root: string): boolean {
  const config = readJson(join(root, GEMINI_SETTINGS_FILE));
  if (!config || config.hooksConfig?.enabled === false) return false;
  const groups: any[] = Array.isArray(config.hooks?.BeforeTool) ? config.hooks.BeforeTool : [];
  const ours = groups.flatMap((g) =>
    (Array.isArray(g?.hooks) ? g.hooks : [])
      .filter((h: any) => isCohentHook(h?.command))
      .map((h: any) => ({ h, matcher: g.matcher })),
  );
  // Wrapped (exit 1 is open bare), every tool, and a timeout in MILLISECONDS the adapter's deadline answers within.
  return (
    ours.length > 0 &&
    ours.every(
      ({ h, matcher }) =>
        wrapsFailure(h.command) &&
        (matcher === undefined || matcher === "*" || matcher === ".*") &&
        typeof h.timeout === "number" &&
        h.timeout > DEADLINE_MS,
    )
  );
}

/** A handler that turns any failure of the adapter into a refusal: `… || { echo reason >&2; exit 2; }`. */
export function wrapsFailure(command: unknown): boolean {
  return isCohentHook(command) && /\|\|\s*\{[^}]*>&2;\s*exit 2;?\s*\}/.test(command);
}

// ---- Cursor ------------------------------------------------------------------------------------

function cursorFailsClosed(root: string): boolean {
  const config = readJson(join(root, CURSOR_HOOKS_FILE));
  const pre: any[] = Array.isArray(config?.hooks?.preToolUse) ? config.hooks.preToolUse : [];
  const ours = pre.filter((h) => isCohentHook(h?.command));
  // failClosed makes a crash, a timeout and empty stdout a block (documented); a matcher would leave tools out.
  return (
    ours.length > 0 &&
    ours.every((h) => h.failClosed === true && (h.matcher === undefined || h.matcher === "*"))
  );
}

// ---- OpenCode ----------------------------------------------------------------------------------

/**
 * Whether the plugin loads: a child node imports a copy of it and calls its
 * one factory with a stub context, as OpenCode does. OpenCode skips a plugin
 * that fails here silently (measured), and then no hook of it ever runs.
 */
export function pluginLoads(root: string): { ok: boolean; why: string } {
  const file = join(root, OPENCODE_PLUGIN_FILE);
  if (!existsSync(file)) return { ok: false, why: `${OPENCODE_PLUGIN_FILE} is missing` };
  const dir = mkdtempSync(join(os().tmpdir(), "cohent-plugin-"));
  try {
    const copy = join(dir, "cohent.mjs");
    writeFileSync(copy, readFileSync(file));
    const script = `
const m = await import(${JSON.stringify("file://" + copy.replace(/\\/g, "/"))});
const fns = Object.values(m).filter((v) => typeof v === "function");
if (fns.length !== 1) { console.log("it exports " + fns.length + " functions, not one plugin"); process.exit(3); }
const hooks = await fns[0]({ directory: process.cwd(), worktree: process.cwd(), client: {}, project: {}, $: () => {} });
const missing = ["tool.execute.before", "tool.execute.after", "chat.message", "event"].filter((k) => typeof hooks?.[k] !== "function");
console.log(missing.length ? "its factory returns no " + missing.join(", ") : "ok");`;
    const r = childProcess().spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
      timeout: 10_000,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    });
    const out = (r.stdout ?? "").trim().split("\n").pop() ?? "";
    if (r.status === 0 && out === "ok")
      return { ok: true, why: "it loads and its factory returns the hooks" };
    const err = (r.stderr ?? "").split("\n").find((l) => /^\s*[A-Za-z]*Error\b/.test(l)) ?? "";
    return {
      ok: false,
      why: out && out !== "ok" ? out : `loading it fails${err ? `: ${err.trim().slice(0, 200)}` : ""}`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the report --------------------------------------------------------------------------------

const NAMES: Record<Host, string> = HOSTS;

/** Which files of the fingerprint belong to which client. */
const FILES: Record<Host, (file: string) => boolean> = {
  copilot: (f) => f.startsWith(COPILOT_HOOKS_DIR) || COPILOT_SETTINGS_FILES.includes(f),
  gemini: (f) => f === GEMINI_SETTINGS_FILE,
  cursor: (f) => f === CURSOR_HOOKS_FILE,
  opencode: (f) => f.startsWith(OPENCODE_PLUGIN_DIR) || f.startsWith(OPENCODE_PLUGINS_DIR),
};

const MAIN_FILE: Record<Host, string> = {
  copilot: COPILOT_HOOKS_FILE,
  gemini: GEMINI_SETTINGS_FILE,
  cursor: CURSOR_HOOKS_FILE,
  opencode: OPENCODE_PLUGIN_FILE,
};

const CLOSED: Record<Host, string> = {
  copilot: `every non-zero exit of the adapter (missing, crashing, no node) refuses the call, and its own ${sec(DEADLINE_MS)} deadline answers before timeoutSec; command hooks only`,
  gemini: `BeforeTool runs behind the fail-closed wrapper (bare, an exit 1 lets the tool run), and the adapter's ${sec(DEADLINE_MS)} deadline answers before the timeout (milliseconds)`,
  cursor:
    "preToolUse carries failClosed: a crash, a timeout or empty output blocks the call (documented; Cursor cannot be run here)",
  opencode:
    "the plugin refuses on a deny and on every failure of the adapter (cannot start, non-zero exit, no or junk answer, 25 s)",
};

/**
 * Each client's wiring, from the fingerprint's changes (wiring.ts, null:
 * nothing recorded to compare with) and the files themselves.
 */
export function clientWiring(
  root: string,
  changes: WiringChange[] | null,
  env: NodeJS.ProcessEnv = process.env,
  home: string = env.HOME ?? os().homedir(),
): { clients: ClientWiring[]; checks: Check[] } {
  const clients: ClientWiring[] = [];
  const checks: Check[] = [];
  const repair =
    "A person restores it: node .cohent/cohent.mjs init --upgrade (or npx cohent init --upgrade), reviews git diff, and commits.";
  for (const host of ["copilot", "gemini", "cursor", "opencode"] as Host[]) {
    const name = NAMES[host];
    const mine = (changes ?? []).filter((c) => FILES[host](c.file));
    const present = existsSync(join(root, MAIN_FILE[host]));
    const loads = host === "opencode" && present ? pluginLoads(root) : null;
    const wired = present && mine.length === 0 && (loads?.ok ?? true);
    const failsClosed =
      host === "copilot"
        ? copilotFailsClosed(root)
        : host === "gemini"
          ? geminiFailsClosed(root)
          : host === "cursor"
            ? cursorFailsClosed(root)
            : present && !mine.some((c) => c.file === OPENCODE_PLUGIN_FILE) && !!loads?.ok;
    const gate =
      host === "copilot"
        ? copilotTrust(root, env, home)
        : host === "gemini"
          ? geminiTrust(root, env, home)
          : host === "opencode"
            ? env.OPENCODE_DISABLE_PROJECT_CONFIG && env.OPENCODE_DISABLE_PROJECT_CONFIG !== "false"
              ? {
                  hooksRun: false,
                  trust:
                    "OPENCODE_DISABLE_PROJECT_CONFIG is set in this environment: OpenCode then loads no project plugin and its agents work unguarded, silently (measured).",
                }
              : { hooksRun: true, trust: "no trust step: OpenCode loads a project plugin at every start." }
            : {
                hooksRun: null,
                trust:
                  "Cursor is wired as its documentation describes, not proven in the binary (it cannot run here), and whether it runs the project's hooks is not something Cohent can read (not measured).",
              };
    clients.push({ host, wired, failsClosed, changes: mine, hooksRun: gate.hooksRun, trust: gate.trust });

    checks.push(
      !present
        ? {
            name: `${host} wiring`,
            status: "fail",
            detail: `${MAIN_FILE[host]} is missing: ${name} runs no Cohent hook in this checkout. Run cohent init --upgrade and commit.`,
          }
        : mine.length
          ? {
              name: `${host} wiring`,
              status: "fail",
              detail: `MODIFIED since cohent init wrote it: ${describeChanges(mine)}. ${repair}`,
            }
          : loads && !loads.ok
            ? {
                name: `${host} wiring`,
                status: "fail",
                detail: `${OPENCODE_PLUGIN_FILE} does not load (${loads.why}): OpenCode skips such a plugin silently, and its agents work unguarded. ${repair}`,
              }
            : {
                name: `${host} wiring`,
                status: "ok",
                detail: `${MAIN_FILE[host]} as cohent init wrote it${loads ? `; ${loads.why}` : ""}.`,
              },
    );
    if (present)
      checks.push(
        failsClosed
          ? { name: `${host} fails closed`, status: "ok", detail: `${CLOSED[host]}.` }
          : {
              name: `${host} fails closed`,
              status: "fail",
              detail: `the ${name} wiring in ${MAIN_FILE[host]} fails OPEN when the adapter fails: ${name} would run the tool anyway. ${repair}`,
            },
      );
    if (gate.hooksRun !== null || host === "cursor")
      checks.push({
        name: `${host} ${host === "opencode" ? "plugin loading" : "folder trust"}`,
        status: gate.hooksRun === true ? "ok" : "warn",
        detail: gate.trust,
      });
  }
  return { clients, checks };
}

/** The summary lines of doctor's human output. */
export function clientSummary(clients: ClientWiring[]): string[] {
  const yes = (b: boolean | null) => (b === null ? "unknown" : b ? "yes" : "NO");
  return [
    `Wired as init wrote it: ${clients.map((c) => `${NAMES[c.host]} ${yes(c.wired)}`).join(", ")}.`,
    `Hooks run here (trust gates): ${clients.map((c) => `${NAMES[c.host]} ${yes(c.hooksRun)}`).join(", ")}.`,
  ];
}

export const clientName = (host: Host) => NAMES[host];
