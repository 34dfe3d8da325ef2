import {
  HOSTS,
  isHost,
  REMOTE_WIRING,
  type EnforcementLevel,
  type EnforcementWhy,
  type Host,
  type HostReport,
} from "@cohent/protocol";

/**
 * Whether the guard really checks a session's tool calls. Pure.
 *
 * Guarded needs all of: a hook that said which client it runs in, a wiring
 * that fails closed in that client (its own wiring as init wrote it, or
 * another client's configuration measured to fail closed there), a checkout
 * whose guard wiring is not reported modified, and evidence: at least one
 * kill-switch read or poll of that hook, which the guard makes before every
 * edit and shell call. A hook that publishes but never guards (an OpenCode
 * plugin skipped at load, a Codex hook no longer trusted, or an agent that
 * has not edited yet) stays advisory until its first guarded call: the
 * Control Room claims no more than it has seen. A host version reported to
 * break the refusal is advisory whatever its wiring. A session of the /mcp
 * endpoint (wiring "remote") is advisory: nothing runs where it edits. Anything else is advisory:
 * coordinated (it may follow the protocol), not enforced.
 */

export interface EnforcementFacts {
  /** The host the session's hook reported (`x-cohent-host`), or null when none did. */
  host: string | null;
  /** The wiring it reported, or null. */
  wiring: string | null;
  /** The host's version it reported, or null. */
  hostVersion?: string | null;
  /** A kill-switch read or poll carrying the report reached the service. */
  guardSeen: boolean;
  /** The files of the session's checkout's open "guard wiring modified" report, or null when there is none. */
  modifiedFiles: readonly string[] | null;
}

export interface Enforcement {
  level: EnforcementLevel;
  why: EnforcementWhy;
  reason: string;
}

/**
 * Another client's configuration a host was measured to honour and to fail
 * closed on (test/clients/MORE-CLIENTS-MEASURED.md): Copilot CLI runs
 * Claude Code's `.claude/settings.json` hooks, honours their deny, and
 * refuses when the hook errors. Hosts missing here are not proven: Cursor,
 * documented to run Claude's hooks, reads an empty answer or a crash there as
 * an allow (no `failClosed` in Claude's format).
 */
const FOREIGN_MEASURED: Partial<Record<Host, string>> = {
  copilot:
    "Copilot CLI runs Claude Code's hooks (.claude/settings.json), honours their deny and refuses when the hook fails (measured)",
};
const FOREIGN_UNPROVEN: Partial<Record<Host, string>> = {
  cursor:
    "Cursor runs Claude Code's hooks (.claude/settings.json) without failClosed: a crash, a timeout or an empty answer lets the call through",
};

/**
 * Versions reported to break the hook's refusal (docs/clients.md, other clients: Copilot CLI 1.0.65 to 1.0.73
 * ignored a deny and ran the tool when the hook crashed). Reported, not measured here; the pinned, measured
 * versions are newer. Inclusive ranges of dotted numbers.
 */
const BROKEN_VERSIONS: Partial<Record<Host, { from: string; to: string; why: string }[]>> = {
  copilot: [
    {
      from: "1.0.65",
      to: "1.0.73",
      why: "Copilot CLI 1.0.65 to 1.0.73 were reported to ignore a hook's deny and to run the tool when the hook crashes: upgrade to 1.0.85 or later",
    },
  ],
};

/** Compares dotted version numbers ("1.0.102" > "1.0.85"); null when `v` does not start with one. */
function compareVersions(v: string, w: string): number | null {
  const parse = (x: string) => /^v?(\d+(?:\.\d+)*)/.exec(x)?.[1]?.split(".").map(Number) ?? null;
  const a = parse(v);
  const b = parse(w)!;
  if (!a) return null;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return Math.sign(d);
  }
  return 0;
}

const brokenVersion = (host: Host, version: string | null | undefined) =>
  version
    ? BROKEN_VERSIONS[host]?.find(
        (r) => (compareVersions(version, r.from) ?? -1) >= 0 && (compareVersions(version, r.to) ?? 1) <= 0,
      )
    : undefined;

/** Native wiring that is written and tested against documented payloads only. */
const NOT_PROVEN_IN_BINARY: ReadonlySet<Host> = new Set(["cursor"]);

const list = (files: readonly string[]) =>
  files.length > 3 ? `${files.slice(0, 3).join(", ")} and ${files.length - 3} more` : files.join(", ");

const advisory = (why: EnforcementWhy, reason: string): Enforcement => ({ level: "advisory", why, reason });

export function enforcement(f: EnforcementFacts): Enforcement {
  if (f.wiring === REMOTE_WIRING)
    return advisory(
      "remote-mcp",
      "A remote agent over /mcp: coordinated (it publishes, claims and checkpoints), but no hook runs where it edits, so nothing checks its writes.",
    );
  if (f.modifiedFiles || f.wiring === "modified")
    return advisory(
      "wiring-modified",
      f.modifiedFiles?.length
        ? `Guard wiring modified in its checkout (${list(f.modifiedFiles)}): a person restores it with cohent init --upgrade.`
        : "Guard wiring modified: its hook runs through a wiring that differs from what cohent init wrote.",
    );
  if (f.host === null)
    return advisory(
      "not-reported",
      "No guard hook said which client this is: a custom integration over HTTP or MCP, or an adapter older than this server (cohent init --upgrade). Coordinated, not enforced.",
    );
  if (!isHost(f.host))
    return advisory(
      "unknown-host",
      "Its hook could not tell which client runs it, so nothing vouches for the wiring.",
    );
  const name = HOSTS[f.host];
  const broken = brokenVersion(f.host, f.hostVersion);
  if (broken) return advisory("host-version", `${broken.why}.`);
  const foreign = f.wiring === "foreign" ? FOREIGN_MEASURED[f.host] : undefined;
  if (f.wiring === "foreign" && !foreign)
    return advisory(
      "foreign-unproven",
      `${FOREIGN_UNPROVEN[f.host] ?? `${name} runs another client's hook configuration, not measured to fail closed there`}. Run cohent init to wire ${name} itself.`,
    );
  if (f.wiring !== "fail-closed" && f.wiring !== "mcp-tool" && !foreign)
    return advisory("not-reported", `${name}'s hook reported no wiring Cohent knows.`);
  if (!f.guardSeen)
    return advisory(
      "no-guard-call",
      `No guarded tool call seen yet: ${name}'s hook reported, but no edit or shell call has reached the guard (a hook or plugin not loaded, hooks not trusted, or no edit yet).`,
    );
  if (foreign)
    return {
      level: "guarded",
      why: "foreign-measured",
      reason: `${foreign}; its tool calls reach the guard.`,
    };
  if (f.wiring === "mcp-tool")
    return {
      level: "guarded",
      why: "mcp-tool",
      reason: `${name}${f.hostVersion ? ` ${f.hostVersion}` : ""} calls the guard in Cohent's MCP server (an mcp_tool hook handler that refuses the call on any failure), no process per tool call; its tool calls reach the guard.`,
    };
  return {
    level: "guarded",
    why: "fail-closed",
    reason: `${name}'s own wiring, as cohent init wrote it, fails closed, and its tool calls reach the guard${
      NOT_PROVEN_IN_BINARY.has(f.host) ? " (wired as documented, not proven in the binary)" : ""
    }.`,
  };
}

/** What a session row holds of its host, as store/sessions reads it. */
export interface StoredHost {
  host: string | null;
  hostVersion: string | null;
  wiring: string | null;
  guardSeenAt: Date | null;
}

/**
 * What a call changes in its session's host record: null when nothing (the
 * hot path then writes nothing). A call without the report changes nothing:
 * a CLI or MCP call of the same session does not erase what its hook said.
 * `guardCall`: the call is a kill-switch read or a poll, which the hook makes
 * only from the guard, before an edit or shell call.
 */
export function hostChange(
  stored: StoredHost,
  report: HostReport | null,
  guardCall: boolean,
): { host: string; hostVersion: string | null; wiring: string; guardSeen: boolean } | null {
  if (!report) return null;
  const guardSeen = guardCall && stored.guardSeenAt === null;
  const same =
    stored.host === report.host &&
    stored.hostVersion === report.hostVersion &&
    stored.wiring === report.wiring;
  return same && !guardSeen ? null : { ...report, guardSeen };
}
