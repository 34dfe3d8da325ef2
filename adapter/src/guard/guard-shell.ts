import { basename, dirname, join, resolve } from "node:path";
import { blocksEdits } from "@cohent/protocol/actions";
import { normalizeRepoPath } from "@cohent/protocol/paths";
import type { Envelope } from "@cohent/protocol";
import {
  activePeers,
  type SessionFile,
  type Checkout,
  claim as serverClaim,
  openCheckout,
  poll as serverPoll,
  session as serverSession,
} from "@cohent/client";
import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { checkGitCommand, classifyGitCommand } from "../git/git-guard.js";
import { guardFileWrites, type GuardWrite } from "./guard-file-writes.js";
import { holdOf, type RealPaths, type ShellHold } from "../shell/hold.js";
import { shellWrites, type ShellWrites } from "../shell/writes.js";
import { ignoredPaths } from "../git/ignored.js";
import type { PeerScope } from "../git/git-guard.js";
import {
  autoClaim,
  gitVerdict,
  guardFilesVerdict,
  NO_PROJECT,
  type Snapshot,
  type ToolKind,
  type Verdict,
} from "./guard.js";
import { classify, type ToolCall } from "./tools.js";
import { checkoutCwd } from "./checkout-cwd.js";
import { recordRead } from "./read-record.js";
import { parseExemptCommand } from "./exemption.js";
import { staleWrites } from "./stale-write.js";
import { decide, type Facts, type GitFacts, type Rule, type ServiceFacts, type Stage } from "./rules.js";

/**
 * The guard's gathering: the facts of one PreToolUse call, stage by stage
 * as the rules ask for them (rules.ts decide), with one contact with the
 * service (a poll when one is due, else the cheap session read), the claim
 * the table needs, one read of the peers' claims and one Git check at most.
 * act.ts does what the decision needs. Session changes stay in the
 * SessionFile; the hook saves it once.
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
 * Where a path leads through symbolic links (shell/hold.ts RealPaths): its
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
 * The guard's own files (guard-files.ts) a call writes, moves or deletes:
 * refused before anything else, the adapter's exempt command included
 * (`node .cohent/cohent.mjs init`), with no contact with the service. The
 * file system is touched only for an edit target or a shell write target
 * (one realpath each, for symlinks) and for an edit of an instruction file
 * (its text, to compare its section).
 */
export function guardWritesOf(
  tool: string,
  input: Record<string, unknown> | undefined,
  call: ToolCall,
  cwd: string,
  root: string | null,
  shell?: ShellWrites,
): GuardWrite[] {
  if (!root || call.kind === null) return [];
  let realRoot: string | null | undefined;
  return guardFileWrites(tool, input, call, {
    cwd,
    root,
    ...(shell ? { shell } : {}),
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
}

/** The refusal of a call that writes the guard's own files (guardWritesOf), or null. */
export function guardFilesCheck(
  tool: string,
  input: Record<string, unknown> | undefined,
  call: ToolCall,
  cwd: string,
  root: string | null,
): Verdict | null {
  return guardFilesVerdict(guardWritesOf(tool, input, call, cwd, root));
}

/**
 * A shell command's writes as held (shell/hold.ts): `~` and $HOME are the
 * hook's home folder, a target through a symbolic link is held by its real
 * path too, Git-ignored paths are left out.
 */
/** The shell reader's answer for a command, with the hook's home folder as `~` and $HOME: read once a call (gather's call stage). */
const readShell = (command: string, cwd: string, root: string): ShellWrites =>
  shellWrites(command, cwd, root, { home: process.env.HOME ?? null });

async function shellHold(writes: ShellWrites, root: string): Promise<ShellHold> {
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
 * The Git guard's facts: a command that stages, commits, stashes or
 * discards is checked against the intent's own scope and the active peers'
 * (read once for the call). Git answers which paths it would take
 * (git-guard.ts); any other command is allowed at once.
 */
export async function gitFacts(
  command: string,
  cwd: string,
  root: string,
  own: string[],
  peers: PeerScope[],
): Promise<GitFacts> {
  let real: { root: string; cwd: string };
  try {
    real = { root: realpathSync(root), cwd: realpathSync(cwd) };
  } catch {
    return { allowed: true };
  }
  if (classifyGitCommand(command, real.cwd).length === 0) return { allowed: true };
  const result = await checkGitCommand({ root: real.root, cwd: real.cwd, command, own, peers });
  if (result.allowed) return { allowed: true };
  return {
    allowed: false,
    reason: gitVerdict(result).reason!,
    paths: [...new Set(result.conflicts.flatMap((c) => c.paths))],
  };
}

/** What the hook knows of this call besides its facts: the session, where it runs, the client's id of it. */
export interface Gathering {
  tool: string;
  input: Record<string, unknown> | undefined;
  root: string | null;
  s: SessionFile | null;
  /** Where the call runs, as the client says. */
  runsIn: string;
  agentId: string | null;
  /** The client's id of this tool call (Claude Code's tool_use_id), which its PostToolUse names again; null when it sends none. */
  callKey: string | null;
  facts: Facts;
  /** Set by the call stage: where the call runs, by its place in the checkout (checkout-cwd.ts). */
  cwd?: string;
  /** Set by the call stage: a shell command's writes, read once for every rule that needs them. */
  shell?: ShellWrites;
  /** Set by the service stage. */
  checkout?: Checkout | null;
  /** The transport's part of the call stage (session bookkeeping): whether it found the last prompt's publish missed. */
  prepare: () => boolean;
  /** Set by the call stage. */
  missedPublish?: boolean;
  /** Set by the call stage: the adapter's own command's arguments. */
  exempt?: string[] | null;
  /** The transport's caught-write read (hook-caught.ts). */
  caught: () => Promise<string | null>;
}

/**
 * The facts of one stage (rules.ts Stage), read once: the service stage
 * with one contact with the service (a poll when one is due, else the cheap
 * session read) and, when the table needs a target claimed, the claim; the
 * peers' claims with one `scopes` read; the Git guard's paths with Git.
 */
export async function gather(g: Gathering, stage: Stage): Promise<void> {
  const f = g.facts;
  switch (stage) {
    case "call": {
      g.missedPublish = g.prepare();
      const call = classify(g.tool, g.input);
      // Where the call runs, named by its place in the checkout when a symbolic link leads there (checkout-cwd.ts).
      const cwd = (g.cwd = call.kind === null ? g.runsIn : checkoutCwd(g.runsIn, g.root));
      g.shell =
        call.kind === "shell" && call.command !== null && g.root
          ? readShell(call.command, cwd, g.root)
          : undefined;
      f.guardWrites = guardWritesOf(g.tool, g.input, call, cwd, g.root, g.shell);
      // The adapter's own command but for a prefix that is not inert: an ordinary shell command, and its deny says why.
      g.exempt = null;
      f.notExempt = null;
      if (call.kind === "shell" && call.command !== null && g.root && g.s) {
        const ex = parseExemptCommand(call.command, { cwd, repoRoot: g.root, sessionId: g.s.id });
        if (ex.exempt) g.exempt = ex.argv;
        else if (ex.prefix) f.notExempt = ex.why;
      }
      f.exempt = g.exempt !== null;
      f.call = call;
      return;
    }
    case "caught":
      f.caught = f.exempt ? null : await g.caught();
      return;
    case "service":
      f.service = await serviceFacts(g, f.call!, g.missedPublish ?? false);
      return;
    case "peers":
      f.peers = await activePeers(g.checkout!, g.s!).catch((err: Error) => ({ error: err.message }));
      return;
    case "git":
      f.git = await gitFacts(f.call!.command!, g.cwd!, g.root!, g.s!.state.scope, f.peers as PeerScope[]);
      return;
    case "stale":
      f.stale = staleWrites(g.root!, g.s!.id, f.service!.snap.targets ?? []);
      return;
  }
}

/** The service stage: the call's targets, the session and its intent as one snapshot, the claim the table needs. */
async function serviceFacts(g: Gathering, call: ToolCall, missedPublish: boolean): Promise<ServiceFacts> {
  const { root, s } = g;
  const cwd = g.cwd!;
  let { kind, targets, targetError } = writeTargets(call, root, cwd);
  // A shell command's visible writes inside the checkout are held like an edit's targets (shell/hold.ts).
  const hold = kind === "shell" && g.shell && root ? await shellHold(g.shell, root) : null;
  if (hold && (hold.named.length || hold.targetError)) {
    kind = "edit";
    targets = hold.named;
    targetError = hold.targetError;
  }
  let checkout: Checkout | null = null;
  let configError: string | null = root ? null : NO_PROJECT;
  if (root) {
    try {
      checkout = { ...openCheckout(root), agentId: g.agentId };
    } catch (err) {
      configError = (err as Error).message;
    }
  }
  g.checkout = checkout;
  let contact: Envelope<any> | null = null;
  if (checkout && s) {
    const st = s.state;
    const pollDue =
      !!st.intentId &&
      ((kind === "edit" && blocksEdits(st.action)) || Date.now() - (st.polledAt ?? 0) >= POLL_EVERY_MS);
    contact = pollDue ? await serverPoll(checkout, s) : await serverSession(checkout, s);
    // Notices wait (a grant, a lost claim): poll now, so that they change the scope before the decision.
    if (!pollDue && contact.ok && (contact.data?.notices ?? 0) > 0 && st.intentId)
      contact = await serverPoll(checkout, s);
  }
  const st = s?.state;
  const snap: Snapshot = {
    control: st?.control ?? "active",
    controlReason: st?.controlReason ?? null,
    contactError: contact && !contact.ok ? contact.error : null,
    configError,
    intentId: st?.intentId ?? null,
    missedPublish,
    action: st?.action ?? null,
    scope: st?.scope ?? [],
    explicitScope: st?.explicitScope ?? false,
    targets,
    targetError,
    claimError: null,
    shellWrite: kind === "edit" && call.kind === "shell",
  };
  const wanted = checkout && s ? autoClaim({ kind }, snap) : null;
  if (wanted && checkout && s) {
    // While queued, this claim of work elsewhere keeps the place, and the grant keeps this work (backend core/queue).
    const env = await serverClaim(checkout, s, wanted, false);
    if (env.ok) {
      snap.scope = s.state.scope;
      // What a grant gives is what the session now holds as read, unless it read it before (stale-write.ts).
      recordRead(root!, s.id, wanted, "grant");
    } else snap.claimError = env.error;
  }
  return { kind, snap, claimed: wanted !== null, hold, bound: !!(checkout && s) };
}

/** Gathers what each rule in turn needs and returns the decision: the first rule that fires (rules.ts). */
export async function decideCall(g: Gathering): Promise<{ rule: Rule; verdict: Verdict }> {
  for (let rounds = 0; ; rounds++) {
    const d = decide(g.facts);
    if (!("need" in d)) return d;
    if (rounds > 8) throw new Error(`the guard asked for the ${d.need} facts twice`);
    await gather(g, d.need);
  }
}
