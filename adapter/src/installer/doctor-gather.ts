import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "@cohent/protocol";
import {
  childProcess,
  connection,
  openCheckout,
  health,
  postAgent,
  credentialsFile,
  findRoot,
  readCredential,
  readProject,
  type Project,
  readRuntime,
  type Runtime,
} from "@cohent/client";
import { clientWiring, type Check, type ClientWiring } from "./doctor-hosts.js";
import { shellWritesCheck } from "./doctor-shell.js";
import { spawnFreeMarks } from "./doctor-claude.js";
import { warmFacts, type WarmFacts } from "./doctor-warm.js";
import { readWiring, reportState, type WiringState } from "./wiring-check.js";

/**
 * doctor's first step: everything it reads, in the order it always read it:
 * the project, the service's health, the credential, the checkout's hook
 * files, Codex's trust store, the guard wiring, the local sessions, the
 * service's view of this person's work (asked from a session of doctor's own,
 * which also reports the wiring state), and the login shell. No verdict here
 * (doctor-decide.ts judges); the shell guard's and the other clients' checks
 * come whole from doctor-shell.ts and doctor-hosts.ts, which read and judge
 * their own files.
 */

/** A JSON file: whether it exists, and its value when it parsed (a missing or broken file is a check's to report). */
export interface JsonFile {
  exists: boolean;
  parsed: boolean;
  value?: any;
}

/** The checkout's .codex/hooks.json and, when it parsed, the Codex trust store that judges it. */
export interface CodexFiles {
  hooksFile: string;
  hooks: JsonFile;
  trust: { home: string; tomlFile: string; toml: string; hooksNewerThanTrust: boolean } | null;
}

/** The service's view of this person's work: each open intent with its session's guard status. */
export interface Work {
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
}

export interface DoctorFacts {
  root: string | null;
  /** null without a root; the project, or why it could not be read. */
  project: { project: Project } | { error: string } | null;
  /** With a project: its endpoint, version record and credential. */
  service: {
    health: Envelope<any>;
    recordedVersion: unknown;
    tokenInEnv: boolean;
    /** The stored credential's file and mode; null when none (not read when COHENT_AGENT_TOKEN is set). */
    credential: { file: string; mode: number } | null;
  } | null;
  /** With a root: what the checkout and this machine say. */
  checkout: {
    codex: CodexFiles;
    claudeSettings: JsonFile;
    /** The config.toml that declares [mcp_servers.cohent], if any. */
    codexMcpFile: string | null;
    wiring: WiringState;
    shellWrites: Check;
    hosts: { clients: ClientWiring[]; checks: Check[] };
    runtime: Runtime;
    /** Claude Code sessions the MCP server guards (doctor-claude.ts). */
    spawnFree: string[];
    /** The warm guard's folder and processes (doctor-warm.ts). */
    warm: WarmFacts;
    now: number;
  } | null;
  /** The status call, when there is a project and the pairing did not fail. */
  status: { envelope?: Envelope<any>; wiringReported: boolean; thrown?: string } | null;
  loginShell: { shell: string; out: string };
}

export function readJsonFile(file: string): JsonFile {
  const exists = existsSync(file);
  try {
    return { exists, parsed: true, value: JSON.parse(readFileSync(file, "utf8")) };
  } catch {
    return { exists, parsed: false };
  }
}

export function codexHome(): string {
  return process.env.CODEX_HOME || join(process.env.HOME ?? "", ".codex");
}

function codexFiles(root: string): CodexFiles {
  const hooksFile = join(root, ".codex", "hooks.json");
  const hooks = readJsonFile(hooksFile);
  if (!hooks.exists || !hooks.parsed) return { hooksFile, hooks, trust: null };
  const home = codexHome();
  const tomlFile = join(home, "config.toml");
  const toml = existsSync(tomlFile) ? readFileSync(tomlFile, "utf8") : "";
  const hooksNewerThanTrust =
    existsSync(tomlFile) && statSync(hooksFile).mtimeMs > statSync(tomlFile).mtimeMs;
  return { hooksFile, hooks, trust: { home, tomlFile, toml, hooksNewerThanTrust } };
}

/** Cohent's MCP server entry for Codex: the checkout's config.toml first, then the user's. */
function codexMcpFile(root: string): string | null {
  const files = [join(root, ".codex", "config.toml"), join(codexHome(), "config.toml")];
  return (
    files.find((f) => existsSync(f) && /^\s*\[mcp_servers\.cohent\]\s*$/m.test(readFileSync(f, "utf8"))) ??
    null
  );
}

/** What `command -v node` answers in a login shell (Codex's shell tool runs one); "" when nothing. */
function loginShell(): { shell: string; out: string } {
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
    return { shell, out };
  } catch {
    return { shell, out: "" };
  }
}

/** The service's view, asked from doctor's own session; reporting the wiring state clears a repaired one. */
async function askStatus(
  root: string,
  wiring: WiringState | null,
): Promise<NonNullable<DoctorFacts["status"]>> {
  const out: NonNullable<DoctorFacts["status"]> = { wiringReported: false };
  try {
    const checkout = openCheckout(root);
    const doctorSession = `doctor-${process.env.USER ?? "user"}`;
    out.envelope = await postAgent(
      { ...connection(checkout, doctorSession), timeoutMs: 5_000 },
      { type: "status" },
    );
    if (out.envelope.ok && wiring)
      out.wiringReported = await reportState(
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
  } catch (err) {
    out.thrown = (err as Error).message;
  }
  return out;
}

export async function gather(scriptUrl: string): Promise<DoctorFacts> {
  const root = findRoot(process.cwd(), scriptUrl);
  let project: DoctorFacts["project"] = null;
  if (root) {
    try {
      project = { project: readProject(root) };
    } catch (err) {
      project = { error: (err as Error).message };
    }
  }
  const found = project && "project" in project ? project.project : null;
  let service: DoctorFacts["service"] = null;
  if (found) {
    const env = await health(found.service, 5_000);
    const recordedVersion = JSON.parse(
      readFileSync(join(root!, ".cohent", "project.json"), "utf8"),
    )?.adapterVersion;
    const tokenInEnv = !!process.env.COHENT_AGENT_TOKEN;
    const credential =
      !tokenInEnv && readCredential(found)
        ? { file: credentialsFile(), mode: statSync(credentialsFile()).mode & 0o777 }
        : null;
    service = { health: env, recordedVersion, tokenInEnv, credential };
  }
  let checkout: DoctorFacts["checkout"] = null;
  if (root) {
    const codex = codexFiles(root);
    const claudeSettings = readJsonFile(join(root, ".claude", "settings.json"));
    const mcp = codexMcpFile(root);
    const wiring = readWiring(root);
    const shellWrites = shellWritesCheck(root);
    const hosts = clientWiring(root, wiring.changes);
    const runtime = readRuntime(root);
    checkout = {
      codex,
      claudeSettings,
      codexMcpFile: mcp,
      wiring,
      shellWrites,
      hosts,
      runtime,
      spawnFree: spawnFreeMarks(root),
      warm: warmFacts(root, process.env, process.platform),
      now: Date.now(),
    };
  }
  // The pairing check fails exactly when neither COHENT_AGENT_TOKEN nor a stored credential is there.
  const paired = !!service && (service.tokenInEnv || service.credential !== null);
  const status = root && found && paired ? await askStatus(root, checkout?.wiring ?? null) : null;
  return { root, project, service, checkout, status, loginShell: loginShell() };
}
