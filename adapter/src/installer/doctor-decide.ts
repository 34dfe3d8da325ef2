import {
  adapterVersionVerdict,
  recordedVersionVerdict,
  type Project,
  LIVE_MS,
  type Runtime,
} from "@cohent/client";
import { claudeSessionsCheck } from "./doctor-claude.js";
import { warmCheck } from "./doctor-warm.js";
import type { Check, ClientWiring } from "./doctor-hosts.js";
import type { DoctorFacts, Work } from "./doctor-gather.js";
import {
  claudeCheck,
  codexMcpCheck,
  codexReport,
  failClosedChecks,
  hookEntryCheck,
  type CodexReport,
} from "./doctor-hooks.js";
import type { WiringState } from "./wiring-check.js";
import { describeChanges } from "./wiring.js";

/**
 * doctor's second step, pure: from what doctor-gather.ts read, the checks in
 * the order doctor prints them, and the report doctor-render.ts shows: the
 * project, the endpoint, the pairing, the hook files (doctor-hooks.ts), the
 * guard wiring, the shell guard (doctor-shell.ts), each other client's wiring
 * and trust gate (doctor-hosts.ts), the credential as the service judged it,
 * and whether `node` resolves in the login shell that Codex's shell tool uses.
 */

export interface LocalSession {
  id: string;
  client: string | null;
  model: string | null;
  intentId: string | null;
  action: string | null;
  control: string;
  scope: string[];
  lastCall: string;
  live: boolean;
}

/** What doctor reports: its --json data, and what its human text is drawn from. */
export interface DoctorReport {
  root: string | null;
  project: Project | null;
  checks: Check[];
  codex: CodexReport | null;
  sessions: LocalSession[];
  work: Work | null;
  guarded: Record<string, boolean>;
  failsClosed: Record<string, boolean>;
  clients: ClientWiring[];
  wiring: { changes: WiringState["changes"]; reported: boolean } | null;
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

export function loginShellNode({ shell, out }: DoctorFacts["loginShell"]): Check {
  if (out)
    return {
      name: "node in a login shell",
      status: "ok",
      detail: `${shell} -lc resolves node to ${out.split("\n").pop()}.`,
    };
  return {
    name: "node in a login shell",
    status: "fail",
    detail: `${shell} -lc does not find node. Codex's shell tool runs a login shell with the system PATH, so the agent cannot run node .cohent/cohent.mjs. Install node system-wide, or put it on PATH in your login profile (~/.profile).`,
  };
}

/** The project, its endpoint, the adapter's version against the server's and the record, and the pairing. */
function serviceChecks(facts: DoctorFacts): Check[] {
  const checks: Check[] = [];
  if (!facts.root)
    checks.push({
      name: "project",
      status: "fail",
      detail: "no .cohent/project.json here or above; run npx cohent init --server URL.",
    });
  else if (facts.project && "project" in facts.project) {
    const { project } = facts.project;
    checks.push({
      name: "project",
      status: "ok",
      detail: `${project.repository} at ${project.service} (${facts.root}).`,
    });
  } else if (facts.project) checks.push({ name: "project", status: "fail", detail: facts.project.error });
  const service = facts.service;
  if (!service || !facts.project || !("project" in facts.project)) return checks;
  const env = service.health;
  checks.push(
    env.ok
      ? { name: "endpoint", status: "ok", detail: `${facts.project.project.service} answers.` }
      : { name: "endpoint", status: "fail", detail: env.error!.message },
  );
  // Upgrades: this adapter against what the server accepts, and against what project.json records.
  for (const v of [
    env.ok ? adapterVersionVerdict(env.meta) : null,
    recordedVersionVerdict(service.recordedVersion),
  ]) {
    if (v) checks.push({ name: "adapter version", ...v });
  }
  if (service.tokenInEnv)
    checks.push({
      name: "pairing",
      status: "ok",
      detail: "COHENT_AGENT_TOKEN is set and overrides the credential store.",
    });
  else if (service.credential) {
    const { file, mode } = service.credential;
    checks.push({
      name: "pairing",
      status: mode & 0o077 ? "warn" : "ok",
      detail: `paired: credential in ${file}${mode & 0o077 ? ` is readable by others (mode ${mode.toString(8)}); chmod 600 it` : ""}.`,
    });
  } else
    checks.push({
      name: "pairing",
      status: "fail",
      detail: `not paired on this machine; run node .cohent/cohent.mjs bootstrap --approve.`,
    });
  return checks;
}

/** The sessions of runtime.json, each live when it called within LIVE_MS and did not end. */
function localSessions(rt: Runtime, now: number): LocalSession[] {
  return Object.entries(rt.sessions).map(([id, s]) => ({
    id,
    client: s.client,
    model: s.model,
    intentId: s.intentId ?? null,
    action: s.action ?? null,
    control: s.control,
    scope: s.scope,
    lastCall: s.seenAt,
    live: !s.endedAt && now - Date.parse(s.seenAt) < LIVE_MS,
  }));
}

/** The status call's answer: whether the service accepted the credential (nothing when it could not be reached). */
function credentialCheck(status: NonNullable<DoctorFacts["status"]>): Check | null {
  const env = status.envelope;
  if (status.thrown !== undefined) return { name: "credential", status: "fail", detail: status.thrown };
  if (env!.ok)
    return { name: "credential", status: "ok", detail: `accepted by the service for ${env!.data.person}.` };
  if (env!.error?.code === "CONTROL_PLANE_UNREACHABLE") return null;
  return {
    name: "credential",
    status: "fail",
    detail: `${env!.error!.code}: ${env!.error!.message} Pair again: node .cohent/cohent.mjs bootstrap --approve.`,
  };
}

export function decide(facts: DoctorFacts): DoctorReport {
  const checks = serviceChecks(facts);
  const co = facts.checkout;
  let codex: CodexReport | null = null;
  if (co && facts.root) {
    const c = codexReport(facts.root, co.codex);
    codex = c.report;
    checks.push(...c.checks);
    checks.push(claudeCheck(co.claudeSettings));
    const sessions = claudeSessionsCheck(co.runtime, co.spawnFree, co.now);
    if (sessions) checks.push(sessions);
    checks.push(warmCheck(co.warm));
    checks.push(
      ...failClosedChecks(co.codex.hooks, co.claudeSettings),
      hookEntryCheck([
        [".codex/hooks.json", co.codex.hooks],
        [".claude/settings.json", co.claudeSettings],
      ]),
    );
    const mcp = codexMcpCheck(co.codexMcpFile);
    if (mcp) checks.push(mcp);
    checks.push(wiringCheck(co.wiring), co.shellWrites);
    checks.push(...co.hosts.checks);
  }
  const credential = facts.status && credentialCheck(facts.status);
  if (credential) checks.push(credential);
  checks.push(loginShellNode(facts.loginShell));
  const clients = co?.hosts.clients ?? [];
  const env = facts.status?.envelope;
  return {
    root: facts.root,
    project: facts.project && "project" in facts.project ? facts.project.project : null,
    checks,
    codex,
    sessions: co ? localSessions(co.runtime, co.now) : [],
    work: env?.ok ? env.data : null,
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
    wiring: co && { changes: co.wiring.changes, reported: facts.status?.wiringReported ?? false },
  };
}
