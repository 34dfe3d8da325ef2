import { rmSync } from "node:fs";
import { join } from "node:path";
import { matchBudget, normalizeRepoPath, scopeCovers } from "@cohent/protocol/paths";
import { crypto, os } from "../builtins.js";
import { CohentError } from "@cohent/protocol/codes";
import { git, gitPatiently, waitForIndexLock, type GitResult } from "./run.js";
import { ownerOf, unsureNote, type PeerScope, type Scopes } from "./peer-scopes.js";

/**
 * `commit`: commits exactly the intent's own changed paths and nothing
 * else. The commit is built in a temporary index seeded from HEAD, so the
 * shared index (a peer's staged work) is never read into it; HEAD moves by
 * compare-and-swap (a concurrent commit makes us rebuild on the new HEAD,
 * so both land); then only our paths are refreshed in the real index,
 * waiting for index.lock rather than failing. No network, no hooks
 * (commit-tree runs none: repository hooks are repository code).
 *
 * Which paths are ours: the changed paths inside the intent's own scope,
 * plus unclaimed changed paths (outside every scope) only when listed
 * explicitly, since a sweep of "everything nobody claimed" easily takes a
 * stray file a person is editing by hand. A listed path inside a peer's
 * scope is refused.
 */

export interface CommitOptions extends Scopes {
  root: string;
  message: string;
  intentId: string;
  person: string;
  client: string | null;
  /** Extra changed paths outside the own scope (repository-relative or absolute); must be unclaimed. */
  paths?: string[];
  /** How long to wait for .git/index.lock and the HEAD ref lock (default 5 s). */
  lockWaitMs?: number;
}

export interface CommitResult {
  hash: string;
  paths: string[];
}

/** Codes besides the protocol's: see the report; these are meant for protocol/src/codes.ts. */
export type CommitErrorCode = "NOTHING_TO_COMMIT" | "GIT_FAILED" | "INDEX_LOCKED";

const MAX_MESSAGE = 20_000;
const ATTEMPTS = 8;

/** Changed paths of the working tree against HEAD, staged or not, untracked included (ignored excluded). */
export async function changedPaths(root: string): Promise<string[]> {
  const r = await git(root, [
    "status",
    "--porcelain=v2",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    "--ignore-submodules=dirty",
  ]);
  if (r.code !== 0)
    throw new CohentError("INVALID_REPOSITORY", `git status failed: ${r.stderr.trim().slice(0, 300)}`);
  const out = new Set<string>();
  const entries = r.stdout.split("\0");
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const fields = (n: number) => e.split(" ").slice(n).join(" ");
    if (e.startsWith("1 ")) out.add(fields(8));
    else if (e.startsWith("2 ")) {
      out.add(fields(9));
      out.add(entries[++i]!);
    } else if (e.startsWith("u ")) out.add(fields(10));
    else if (e.startsWith("? ")) out.add(e.slice(2));
  }
  return [...out].filter(Boolean).sort();
}

export interface Partition {
  /** What `commit` would take: own-scope changes plus listed unclaimed ones. */
  mine: string[];
  /** Unclaimed changes not listed: left alone, reported so the caller can list them. */
  unclaimed: string[];
  /** Changes in peers' scopes: never taken. */
  peers: { peer: PeerScope; paths: string[] }[];
}

/** Sorts the changed paths into the caller's, unclaimed ones and peers'. Throws SCOPE_CONFLICT for a listed peer path. */
export async function partition(
  root: string,
  scopes: Scopes,
  listed: readonly string[] = [],
): Promise<Partition> {
  const extra = new Set(listed.map((p) => normalizeRepoPath(p, root)));
  const mine: string[] = [];
  const unclaimed: string[] = [];
  const byPeer = new Map<PeerScope, string[]>();
  const budget = matchBudget();
  for (const p of await changedPaths(root)) {
    const owner = ownerOf(p, scopes, false, budget);
    const isListed = [...extra].some((x) => scopeCovers([x], p));
    if (owner !== "own") {
      byPeer.set(owner, [...(byPeer.get(owner) ?? []), p]);
      if (isListed) {
        throw new CohentError(
          "SCOPE_CONFLICT",
          `${p} lies in the scope of ${owner.person} (${owner.intentId}); commit only your own paths.${unsureNote([owner], budget)}`,
          { paths: [p], intentId: owner.intentId },
        );
      }
    } else if (scopeCovers(scopes.own, p) || isListed) mine.push(p);
    else unclaimed.push(p);
  }
  return { mine, unclaimed, peers: [...byPeer].map(([peer, paths]) => ({ peer, paths })) };
}

/** One line, no control characters: values that go into a trailer. */
function trailerValue(s: string): string {
  return s
    .replace(/[\x00-\x1f\x7f]+/g, " ")
    .trim()
    .slice(0, 200);
}

function withTrailers(message: string, o: CommitOptions): string {
  const body = message.replace(/\0/g, "").replace(/\s+$/, "");
  const trailers = [`Cohent-Intent: ${trailerValue(o.intentId)}`, `Cohent-Person: ${trailerValue(o.person)}`];
  if (o.client) trailers.push(`Cohent-Client: ${trailerValue(o.client)}`);
  return `${body}\n\n${trailers.join("\n")}\n`;
}

function check(r: GitResult, what: string): string {
  if (r.code !== 0)
    throw new CohentError(
      "GIT_FAILED",
      `${what} failed: ${r.stderr.trim().slice(0, 500) || `exit ${r.code}`}`,
    );
  return r.stdout.trim();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Commits the caller's own changed paths; returns the new commit and the paths it took. */
export async function commitOwn(o: CommitOptions): Promise<CommitResult> {
  if (typeof o.message !== "string" || o.message.trim() === "")
    throw new CohentError("INVALID_INPUT", 'A commit message is required: commit -m "…".');
  if (o.message.length > MAX_MESSAGE)
    throw new CohentError("INVALID_INPUT", `The commit message is longer than ${MAX_MESSAGE} characters.`);
  const { mine, unclaimed, peers } = await partition(o.root, o, o.paths ?? []);
  if (mine.length === 0) {
    const hint = unclaimed.length
      ? ` Changes outside every scope: ${unclaimed.slice(0, 20).join(", ")}; list the ones that are yours to commit them.`
      : "";
    const theirs = peers.length
      ? ` Changes in peers' scopes are left alone (${peers.map((p) => p.paths.length).reduce((a, b) => a + b, 0)} paths).`
      : "";
    throw new CohentError(
      "NOTHING_TO_COMMIT",
      `None of the changed paths lie in your scope (${o.own.join(", ") || "none"}).${hint}${theirs}`,
      { unclaimed },
    );
  }
  const waitMs = o.lockWaitMs ?? 5_000;
  const deadline = Date.now() + waitMs;
  const message = withTrailers(o.message, o);
  const pathList = mine.join("\0");
  const subject = o.message.split("\n")[0]!.slice(0, 100);
  let hash: string;
  // Land nothing while another git holds the index: the commit is only whole once our paths are refreshed there.
  if (!(await waitForIndexLock(o.root, deadline))) {
    throw new CohentError(
      "INDEX_LOCKED",
      `Another git command holds the index lock (.git/index.lock) for more than ${waitMs} ms; nothing was committed. Try again when it has finished.`,
    );
  }
  for (let attempt = 0; ; attempt++) {
    const headR = await git(o.root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
    const head = headR.code === 0 ? headR.stdout.trim() : null;
    const tmp = join(os().tmpdir(), `cohent-index-${process.pid}-${crypto().randomBytes(6).toString("hex")}`);
    const env = { GIT_INDEX_FILE: tmp };
    try {
      check(
        await git(o.root, head ? ["read-tree", head] : ["read-tree", "--empty"], { env }),
        "git read-tree",
      );
      check(
        await git(
          o.root,
          ["--literal-pathspecs", "add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"],
          { env, input: pathList },
        ),
        "git add (temporary index)",
      );
      const tree = check(await git(o.root, ["write-tree"], { env }), "git write-tree");
      if (head && check(await git(o.root, ["rev-parse", `${head}^{tree}`]), "git rev-parse") === tree) {
        throw new CohentError(
          "NOTHING_TO_COMMIT",
          `Your changed paths (${mine.join(", ")}) already match HEAD.`,
        );
      }
      hash = check(
        await git(o.root, ["commit-tree", tree, ...(head ? ["-p", head] : []), "-F", "-"], {
          input: message,
        }),
        "git commit-tree",
      );
    } finally {
      rmSync(tmp, { force: true });
    }
    // Compare-and-swap: if another commit moved HEAD meanwhile, build again on top of it.
    const moved = await git(o.root, [
      "update-ref",
      "-m",
      `commit (cohent): ${subject}`,
      "HEAD",
      hash,
      head ?? "",
    ]);
    if (moved.code === 0) break;
    if (attempt + 1 >= ATTEMPTS || Date.now() >= deadline) {
      throw new CohentError(
        /lock/i.test(moved.stderr) ? "INDEX_LOCKED" : "GIT_FAILED",
        `Could not move HEAD to the new commit: ${moved.stderr.trim().slice(0, 300)}`,
      );
    }
    await sleep(20 + Math.random() * 80);
  }
  // Only our paths in the real index now match the new commit; a peer's staged work stays staged.
  const refreshed = await gitPatiently(
    o.root,
    ["--literal-pathspecs", "reset", "-q", hash, "--pathspec-from-file=-", "--pathspec-file-nul"],
    Math.max(deadline - Date.now(), 1_000),
    { input: pathList },
  );
  if (refreshed.code !== 0 && /fatal|error/i.test(refreshed.stderr)) {
    throw new CohentError(
      /lock/i.test(refreshed.stderr) ? "INDEX_LOCKED" : "GIT_FAILED",
      `Committed ${hash.slice(0, 12)}, but refreshing the index for its paths failed (run git reset -q -- <paths> yourself): ${refreshed.stderr.trim().slice(0, 300)}`,
      { hash, paths: mine },
    );
  }
  return { hash, paths: mine };
}
