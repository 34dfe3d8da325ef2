import { basename, dirname, join, resolve } from "node:path";
import { blocksEdits } from "@cohent/protocol/actions";
import { normalizeRepoPath } from "@cohent/protocol/paths";
import type { Envelope, ScopeConflict } from "@cohent/protocol";
import * as client from "@cohent/client/service/client.js";
import { takeNotices } from "@cohent/client/service/notices.js";
import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { activePeers } from "@cohent/client/git/commit-op.js";
import { checkGitCommand, classifyGitCommand } from "../git/git-guard.js";
import { guardFileWrites } from "./guard-file-writes.js";
import { holdOf, peerConflicts, type RealPaths, type ShellHold } from "./shell-hold.js";
import { shellWrites } from "./shell-writes.js";
import { ignoredPaths } from "../git/ignored.js";
import type { PeerScope } from "../git/git-guard.js";
import { noteCall, reportCaught, watchCall } from "./held-call.js";
import { noteBackground, startsBackground } from "./held-background.js";
import {
  assess,
  autoClaim,
  gitVerdict,
  guardFilesVerdict,
  holdersWanted,
  NO_PROJECT,
  reportedKind,
  type Snapshot,
  type ToolKind,
  type Verdict,
  withNotices,
} from "./guard.js";
import type { SessionFile } from "@cohent/client/state/runtime.js";
import type { ToolCall } from "./tools.js";

/**
 * The guard's shell: gathers the snapshot for one PreToolUse call with one
 * contact with the service (a poll when one is due, else the cheap session
 * read), lets the pure guard decide, and performs what the decision needs
 * (claiming an edit's targets, reporting a local refusal). Session changes
 * stay in the SessionFile; the hook saves it once.
 */

/** How often the guard polls while nothing blocks; in between it reads only the kill switch. */
const POLL_EVERY_MS =
  process.env.COHENT_POLL_EVERY_MS && Number(process.env.COHENT_POLL_EVERY_MS) >= 0
    ? Number(process.env.COHENT_POLL_EVERY_MS)
    : 10_000;

/**
 * Edit targets inside the repository, each also by its real path when a
 * symbolic link leads it into the checkout (a link in the agent's own scope
 * to a peer's file); an edit wholly outside it is held to the kill switch
 * only (a shell's rules).
 */
function writeTargets(
  call: ToolCall,
  root: string | null,
  cwd: string,
): { kind: ToolKind; targets: string[] | null; targetError: string | null } {
  if (call.kind !== "edit" || !root || !call.targets)
    return { kind: call.kind!, targets: null, targetError: null };
  const names: string[] = [];
  const reals: string[] = [];
  let targetError: string | null = null;
  const links = linkResolver(root);
  for (const t of call.targets) {
    const abs = resolve(cwd, t);
    const real = links.real(abs, true);
    const rel = real === null ? null : links.inside(real);
    if (rel !== null && rel !== "**") reals.push(rel);
    if (abs !== root && !abs.startsWith(root + "/")) continue;
    try {
      names.push(normalizeRepoPath(abs, root));
    } catch (err) {
      targetError = (err as Error).message;
    }
  }
  const inside = [...new Set([...names, ...reals])];
  return { kind: inside.length === 0 && !targetError ? "shell" : "edit", targets: inside, targetError };
}

/**
 * Where a path leads through symbolic links (shell-hold.ts RealPaths): its
 * real path (the last part followed or not), and the repository path of a
 * real path inside the checkout's real root. Null where nothing differs.
 */
function linkResolver(root: string): RealPaths & { inside: (real: string) => string | null } {
  let realRoot: string | null | undefined;
  const rootOf = () => (realRoot ??= realPath(root));
  return {
    real: (abs, last) => {
      const real = last ? realPath(abs) : join(realPath(dirname(abs)) ?? dirname(abs), basename(abs));
      return real === null || real === abs ? null : real;
    },
    root: rootOf,
    inside: (real) => {
      const r = rootOf();
      if (r === null || (real !== r && !real.startsWith(r + "/"))) return null;
      try {
        return normalizeRepoPath(real, r);
      } catch {
        return null;
      }
    },
  };
}

/**
 * The real path of an absolute path: symlinks followed as far as it exists,
 * the missing rest kept as written. existsSync walks up to the part that
 * exists without an exception (one costs more than the system calls), and
 * one realpath resolves it. A missing last part is looked at once more: a
 * dangling link, since writing through one creates its target.
 */
function realPath(abs: string, depth = 0): string | null {
  const missing: string[] = [];
  let p = abs;
  // Whatever the file system says (ENOTDIR under a file, EACCES, a loop), no real path: the call is judged by its name.
  try {
    while (!existsSync(p)) {
      if (missing.length === 0 && depth < 8 && lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink())
        return realPath(resolve(dirname(p), readlinkSync(p)), depth + 1);
      if (dirname(p) === p) return null;
      missing.push(basename(p));
      p = dirname(p);
    }
    return join(realpathSync.native(p), ...missing.reverse());
  } catch {
    return null;
  }
}

/**
 * The guard's own files (guard-files.ts): a call that writes, moves or
 * deletes them is refused before anything else, the adapter's exempt command
 * included (`node .cohent/cohent.mjs init`), with no contact with the
 * service. Null for every other call. The file system is touched only for
 * an edit target or a shell write target (one realpath each, for symlinks)
 * and for an edit of an instruction file (its text, to compare its section).
 */
export function guardFilesCheck(
  tool: string,
  input: Record<string, unknown> | undefined,
  call: ToolCall,
  cwd: string,
  root: string | null,
): Verdict | null {
  if (!root || call.kind === null) return null;
  let realRoot: string | null | undefined;
  const writes = guardFileWrites(tool, input, call, {
    cwd,
    root,
    realpath: realPath,
    realRoot: () => (realRoot ??= realPath(root)),
    readFile: (rel) => {
      try {
        return readFileSync(join(root, rel), "utf8");
      } catch {
        return null;
      }
    },
    // The clients' user settings are placed from the hook's own environment (host-settings.ts).
    env: process.env,
  });
  return guardFilesVerdict(writes);
}

/** What the hook knows of this call besides the session: a publish missed (the stale intent already dropped), the sub-agent making it, the client's id of the call. */
export interface CallFacts {
  missedPublish: boolean;
  agentId: string | null;
  /** The client's id of this tool call (Claude Code's tool_use_id), which its PostToolUse names again; null when it sends none. */
  callKey: string | null;
  /** The tool's input as the client sent it (a run-in-background flag, held-background.ts). */
  input?: Record<string, unknown>;
}

/**
 * A shell command's writes as held (shell-hold.ts): `~` and $HOME are the
 * hook's home folder, a target through a symbolic link is held by its real
 * path too, Git-ignored paths are left out.
 */
async function shellHold(command: string, cwd: string, root: string): Promise<ShellHold> {
  const writes = shellWrites(command, cwd, root, { home: process.env.HOME ?? null });
  const hold = holdOf(writes, root, linkResolver(root));
  const ignored = await ignoredPaths(root, [...hold.named, ...hold.uncertain]);
  if (ignored.size === 0) return hold;
  return {
    ...hold,
    named: hold.named.filter((p) => !ignored.has(p)),
    uncertain: hold.uncertain.filter((p) => !ignored.has(p)),
  };
}

/**
 * What an allowed call needs beyond the table: the peers' claims (for an
 * uncertain write, a Git command, the snapshot), and the watch around it:
 * every shell call and every opaque MCP tool, a command the reader takes
 * for a read included, since a reader that misjudges one program must not
 * lose a peer's work silently (held-call.ts).
 */
function watchOf(call: ToolCall): { snapshot: boolean } | null {
  return call.kind === "shell" ? { snapshot: true } : null;
}

const peersUnknown = (message: string): Verdict => ({
  permission: "deny",
  condition: "unreachable",
  reason: `the active peers' claims could not be read (${message}), so this command cannot be checked against their work. Try again in a few seconds; nothing was changed.`,
});

/** A write the local scope calls this session's own but a peer's live claim covers (a forged or stale cache): refused like a conflicting claim. */
function heldVerdict(targets: readonly string[], peers: PeerScope[], snap: Snapshot): Verdict | null {
  const conflicts = peerConflicts(targets, false, peers).map((c) => ({
    ...c,
    objective: peers.find((p) => p.intentId === c.intentId)?.objective ?? null,
  }));
  if (conflicts.length === 0) return null;
  return assess(
    { kind: "edit" },
    {
      ...snap,
      holders: conflicts,
      claimError: { code: "SCOPE_CONFLICT", message: "a peer holds these paths", details: { conflicts } },
    },
  );
}

/** An uncertain write (a one-liner's path, a word built at run time) where a peer holds it, or the whole checkout while a peer holds anything: refused like an edit of it. */
function uncertainVerdict(hold: ShellHold, peers: PeerScope[], snap: Snapshot): Verdict | null {
  const conflicts = peerConflicts(hold.uncertain, hold.whole, peers);
  if (conflicts.length === 0) return null;
  const paths = [...new Set(conflicts.flatMap((c) => c.paths))];
  return assess(
    { kind: "edit" },
    {
      ...snap,
      targets: paths,
      targetError: null,
      shellWrite: true,
      claimError: { code: "SCOPE_CONFLICT", message: "a peer holds these paths", details: { conflicts } },
    },
  );
}

/**
 * The peers whose claims hold some of `targets` (one `scopes` read), worded
 * as the service words a conflict, with each one's objective where the
 * service gives it. Null when their claims cannot be read: the refusal then
 * keeps its own words (it stays a refusal).
 */
async function heldBy(
  checkout: client.Checkout,
  s: SessionFile,
  targets: readonly string[],
): Promise<ScopeConflict[] | null> {
  const peers = await activePeers(checkout, s).catch(() => null);
  if (!peers) return null;
  return peerConflicts(targets, false, peers).map((c) => ({
    ...c,
    objective: peers.find((p) => p.intentId === c.intentId)?.objective ?? null,
  }));
}

export async function guard(
  tool: string,
  call: ToolCall,
  cwd: string,
  root: string | null,
  s: SessionFile | null,
  facts: CallFacts,
): Promise<Verdict> {
  let { kind, targets, targetError } = writeTargets(call, root, cwd);
  // A shell command's visible writes inside the checkout are held like an edit's targets (shell-hold.ts).
  const hold =
    kind === "shell" && call.command !== null && root ? await shellHold(call.command, cwd, root) : null;
  if (hold && (hold.named.length || hold.targetError)) {
    kind = "edit";
    targets = hold.named;
    targetError = hold.targetError;
  }
  let checkout: client.Checkout | null = null;
  let configError: string | null = root ? null : NO_PROJECT;
  if (root) {
    try {
      checkout = { ...client.openCheckout(root), agentId: facts.agentId };
    } catch (err) {
      configError = (err as Error).message;
    }
  }
  let contact: Envelope<any> | null = null;
  if (checkout && s) {
    const st = s.state;
    const pollDue =
      !!st.intentId &&
      ((kind === "edit" && blocksEdits(st.action)) || Date.now() - (st.polledAt ?? 0) >= POLL_EVERY_MS);
    contact = pollDue ? await client.poll(checkout, s) : await client.session(checkout, s);
    // Notices wait (a grant, a lost claim): poll now, so that they change the scope before the decision.
    if (!pollDue && contact.ok && (contact.data?.notices ?? 0) > 0 && st.intentId)
      contact = await client.poll(checkout, s);
  }
  const st = s?.state;
  const snap: Snapshot = {
    control: st?.control ?? "active",
    controlReason: st?.controlReason ?? null,
    contactError: contact && !contact.ok ? contact.error : null,
    configError,
    intentId: st?.intentId ?? null,
    missedPublish: facts.missedPublish,
    action: st?.action ?? null,
    scope: st?.scope ?? [],
    explicitScope: st?.explicitScope ?? false,
    targets,
    targetError,
    claimError: null,
    shellWrite: kind === "edit" && call.kind === "shell",
  };
  const judged = { kind };
  const wanted = checkout && s ? autoClaim(judged, snap) : null;
  if (wanted && checkout && s) {
    // While queued, this claim of work elsewhere keeps the place, and the grant keeps this work (backend core/queue).
    const env = await client.claim(checkout, s, wanted, false);
    if (env.ok) snap.scope = s.state.scope;
    else snap.claimError = env.error;
  }
  let verdict = assess(judged, snap);
  // The holder first: a refused write that a peer holds names the peer; its claims are read on this deny path only.
  if (holdersWanted(verdict, snap) && checkout && s) {
    const holders = await heldBy(checkout, s, snap.targets!);
    if (holders) verdict = assess(judged, { ...snap, holders });
  }
  // The service, not the local cache, says whose a path is: runtime.json is a file the agent's shell can
  // write, so a write the cached scope calls this session's own is checked against the peers' live claims.
  let peersRead: Promise<PeerScope[] | Error> | null = null;
  const peersOnce = () => (peersRead ??= activePeers(checkout!, s!).catch((err: Error) => err));
  if (verdict.permission === "allow" && kind === "edit" && !wanted && targets?.length && checkout && s) {
    const peers = await peersOnce();
    verdict =
      peers instanceof Error ? peersUnknown(peers.message) : (heldVerdict(targets, peers, snap) ?? verdict);
  }
  const reported = verdict.permission === "deny" ? reportedKind(verdict, snap) : null;
  if (reported && checkout && s)
    await client
      .reportGuard(checkout, s, { kind: reported, tool, paths: targets ?? [] })
      .catch(() => undefined);
  // What else a shell call needs, once it passed the table: the peers' claims, read once for all of it.
  const watched = verdict.permission === "allow" && root && checkout && s ? watchOf(call) : null;
  if (watched && root && checkout && s) {
    const peers = await peersOnce();
    if (peers instanceof Error) {
      verdict = peersUnknown(peers.message);
    } else {
      if (hold) verdict = uncertainVerdict(hold, peers, snap) ?? verdict;
      if (verdict.permission === "allow" && call.command)
        verdict = await gitGuard(tool, call.command, cwd, root, checkout, s, peers);
      if (verdict.permission === "allow" && watched.snapshot) {
        const between = await watchCall(root, s, facts.callKey, { tool, command: call.command, peers });
        if (between) await reportCaught(checkout, s, between);
      }
    }
  }
  // Our own writes under way, so that a peer's check after its call does not blame them on it (held-call.ts).
  if (verdict.permission === "allow" && root && s && call.kind !== null)
    noteCall(root, s, call.kind === "shell" ? [...s.state.scope, ...(targets ?? [])] : (targets ?? []));
  // A job left running names its session as the likely writer of what changes later (held-background.ts).
  if (
    verdict.permission === "allow" &&
    root &&
    s &&
    call.kind === "shell" &&
    startsBackground(call.command, facts.input)
  )
    noteBackground(root, s.id, s.state.scope);
  // Notices received on this call open a refusal's reason (a refused call gets no PostToolUse); an allowed call shows them there.
  return verdict.permission === "deny" && s ? withNotices(verdict, takeNotices(s)) : verdict;
}

/**
 * The Git guard's shell: a command that stages, commits, stashes or discards
 * is checked against the intent's own scope and the active peers' (one
 * `scopes` read, made only for such commands: an ordinary shell call costs
 * nothing more). Git answers which paths it would take (git-guard.ts).
 */
async function gitGuard(
  tool: string,
  command: string,
  cwd: string,
  root: string,
  checkout: client.Checkout,
  s: SessionFile,
  peers: PeerScope[],
): Promise<Verdict> {
  let real: { root: string; cwd: string };
  try {
    real = { root: realpathSync(root), cwd: realpathSync(cwd) };
  } catch {
    return gitVerdict({ allowed: true });
  }
  if (classifyGitCommand(command, real.cwd).length === 0) return gitVerdict({ allowed: true });
  const result = await checkGitCommand({
    root: real.root,
    cwd: real.cwd,
    command,
    own: s.state.scope,
    peers,
  });
  if (!result.allowed) {
    const paths = [...new Set(result.conflicts.flatMap((c) => c.paths))];
    await client.reportGuard(checkout, s, { kind: "git-peer-changes", tool, paths }).catch(() => undefined);
  }
  return gitVerdict(result);
}
