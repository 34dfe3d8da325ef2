import { z } from "zod";
import { BOUNDS, REQUEST_ID_PATTERN } from "./bounds.js";
import { IntentRecord, Usage } from "./intent.js";

export const Id = (prefix: string) =>
  z
    .string()
    .max(BOUNDS.idChars)
    .regex(new RegExp(`^${prefix}_[A-Za-z0-9]+$`), `expected a ${prefix}_… id`);

export const IntentId = Id("wki");
export const PacketId = Id("pkt");

/** Paths as sent; the backend normalizes them (see paths.ts). */
export const PathList = z.array(z.string().max(BOUNDS.pathChars)).max(BOUNDS.paths);
const Identity = z.string().trim().min(1).max(BOUNDS.identityChars);

export const PublishRequest = z.strictObject({
  type: z.literal("publish"),
  prompt: z.string().min(1).max(BOUNDS.promptChars),
  paths: PathList.default([]),
  clientName: Identity.optional(),
  model: Identity.optional(),
});

export const IntentRequest = z.strictObject({
  type: z.literal("intent"),
  intentId: IntentId,
  intent: IntentRecord,
  usage: Usage.optional(),
});

export const ScopeRequest = z.strictObject({
  type: z.literal("scope"),
  intentId: IntentId,
  paths: PathList,
  /**
   * On a collision, also join the repository's claim queue for these paths
   * (first come, first served): the claim is granted the moment they are
   * all free, and the grant arrives as a `scope-granted` notice.
   */
  queue: z.boolean().default(false),
});

/**
 * Ask the holders of `paths` to let go. The note reaches each holder's next
 * packet as untrusted peer text, bounded and redacted; the answer is theirs.
 */
export const ReleaseRequest = z.strictObject({
  type: z.literal("release-request"),
  intentId: IntentId,
  paths: PathList.min(1),
  note: z.string().max(BOUNDS.releaseNoteChars).default(""),
});

export const CheckpointStatus = z.enum(["working", "blocked", "completed", "abandoned"]);
/** Where a checkpoint's paths came from: the staged diff read by the adapter, or the caller's word. */
export const PathsSource = z.enum(["provided-unverified", "repository-derived"]);
/** A Git commit hash (SHA-1 or SHA-256 object name). */
export const CommitHash = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, "a full Git commit hash");
export const CheckpointRequest = z.strictObject({
  type: z.literal("checkpoint"),
  intentId: IntentId,
  status: CheckpointStatus,
  summary: z.string().max(BOUNDS.summaryChars).default(""),
  paths: PathList.optional(),
  pathsSource: PathsSource.default("provided-unverified"),
  /** The commit `commit` made for this intent; its paths are then what the commit took, and the claim stays as it is. */
  commit: CommitHash.optional(),
  usage: Usage.optional(),
});

/** The brief: goal, this intent's latest decision, and the active peers. Read-only apart from the packet it records. */
export const ContextRequest = z.strictObject({
  type: z.literal("context"),
  intentId: IntentId.optional(),
});

/**
 * Refusals the adapter made locally, so that guard catches are counted where
 * they happen. Scope conflicts are not among them: the server counts those
 * itself when it refuses the claim. `shell-write` is no refusal but a write
 * caught after the call: a shell (or opaque MCP) call changed files that
 * peers hold, which their own guarded edits do not explain. `guard-files`
 * is a call that changed the guard's own files (the checkout's wiring, or a
 * file outside it from which a client reads its hooks or the switch that
 * turns them off): the server pauses the session that made it. `refused` is
 * a refusal by a rule no other kind names (a peer's claim the adapter found,
 * a stale write, …): its `rule` says which.
 */
export const GuardKind = z.enum([
  "outside-scope",
  "intent-not-ready",
  "paused",
  "cancelled",
  "unreachable",
  "unconfigured",
  "git-peer-changes",
  "shell-write",
  "guard-files",
  "refused",
]);
/**
 * The name of the guard's rule that made a refusal (adapter/src/guard/rules.ts
 * lists them: "outside-scope", "peer-holds", "stale-write", …). A short
 * lower-case slug, so that it can be shown and counted as it is; a name the
 * service has not heard of (a newer adapter's rule) is counted under itself.
 */
export const GuardRuleName = z
  .string()
  .max(BOUNDS.ruleNameChars)
  .regex(/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/, "a rule's name: lower-case letters and digits joined by -");
/** The kinds a guard report that is no refusal of a rule has: the wiring's state, writes caught after the call. */
export const NOT_RULE_KINDS: ReadonlySet<string> = new Set(["wiring", "shell-write", "guard-files"]);
/**
 * The rule of a refusal reported without one (an adapter from before rules
 * were named, or a claim the service refused itself: `scope-conflict`), by
 * its kind; null for a kind that is no refusal.
 */
const KIND_RULES: ReadonlyMap<string, string> = new Map([
  ["scope-conflict", "scope-conflict"],
  ["outside-scope", "outside-scope"],
  ["intent-not-ready", "intent-not-ready"],
  ["paused", "stopped"],
  ["cancelled", "stopped"],
  ["unreachable", "unreachable"],
  ["unconfigured", "unconfigured"],
  ["git-peer-changes", "git-refused"],
]);
export const ruleOfKind = (kind: string): string | null => KIND_RULES.get(kind) ?? null;
/**
 * One file of the guard's wiring (what `cohent init` writes and wires) that
 * differs from what init wrote: which file, relative to the checkout, and
 * what changed in one short phrase. Peer text: bounded, and of a character
 * set that holds no markup and no line break.
 */
export const WiringChange = z.strictObject({
  file: z
    .string()
    .min(1)
    .max(BOUNDS.pathChars)
    .regex(
      /^(?!.*(?:^|\/)\.\.?(?:\/|$))[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*$/,
      "a path inside the checkout: letters, digits, . _ - separated by /, no . or .. segment",
    ),
  change: z
    .string()
    .min(1)
    .max(BOUNDS.wiringPhraseChars)
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9 .,:()_/-]*$/,
      "a short phrase: letters, digits, spaces and . , : ( ) _ / -",
    ),
});
/**
 * The state of one checkout's guard wiring, as its adapter found it at a
 * session start (or `doctor`): `changes` empty means intact, which clears an
 * earlier report of the same checkout. `checkout` is opaque: a hash of the
 * machine and the checkout's directory, so that two checkouts of one
 * repository on one machine (one credential) are told apart.
 */
export const WiringReport = z.strictObject({
  checkout: z.string().regex(/^[0-9a-f]{16,64}$/, "16 to 64 lower-case hex digits"),
  changes: z.array(WiringChange).max(BOUNDS.wiringChanges),
});
/**
 * One of the guard's own files a call changed (`guard`, kind `guard-files`):
 * its path as the adapter found it (repository-relative, absolute for a
 * client's user or machine settings, or ~/…), and what changed in one short
 * phrase ("disableAllHooks set", "deleted"). Peer text, shown to people:
 * bounded, one line, no markup, no . or .. segment.
 */
export const GuardFileChange = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(BOUNDS.pathChars)
    .regex(
      /^[^\x00-\x1f\x7f<>\u2028\u2029\u202a-\u202e\u2066-\u2069]+$/,
      "a path on one line, without control characters or < >",
    )
    .refine((p) => !p.split("/").some((seg) => seg === "." || seg === ".."), {
      message: "a path without . or .. segments",
    }),
  change: WiringChange.shape.change.optional(),
});
/** A peer intent whose claim covers files a shell call changed, with those of its paths that changed. */
export const ShellWritePeer = z.strictObject({
  intentId: IntentId,
  paths: PathList.min(1),
});
const SHELL_WRITE_FIELDS = ["peers", "restorable"] as const;
const GUARD_FILES_FIELDS = ["files", "undone"] as const;
export const GuardRequest = z
  .strictObject({
    type: z.literal("guard"),
    intentId: IntentId.optional(),
    /** A refusal the adapter made, or `wiring`: the guard wiring's state (then `wiring` is set). */
    kind: z.union([GuardKind, z.literal("wiring")]),
    tool: z.string().min(1).max(BOUNDS.identityChars),
    /** The guard's rule that refused (GuardRuleName): on a refusal only; kind `refused` always names it. */
    rule: GuardRuleName.optional(),
    /** The paths refused; for `shell-write`, every changed path that a peer holds; none for `guard-files` (`files` has them). */
    paths: PathList.default([]),
    wiring: WiringReport.optional(),
    /** shell-write, guard-files: the command that wrote (peer text: redacted by the server, told as untrusted). */
    command: z.string().max(BOUNDS.caughtCommandChars).optional(),
    /** shell-write: each peer intent whose claim covers changed paths, with those paths. */
    peers: z.array(ShellWritePeer).max(BOUNDS.caughtPeers).optional(),
    /** shell-write: whether the checkout kept the bytes from before (`restore` brings them back). */
    restorable: z.boolean().optional(),
    /**
     * shell-write: noticed between calls. The files changed while no call of
     * any session explains it (a background job, a process outside any
     * agent): the reporter only noticed, so its own intent may be among the
     * peers, and the writer is unknown unless `command` guesses it.
     */
    between: z.boolean().optional(),
    /** guard-files: the guard's files the call changed. */
    files: z.array(GuardFileChange).min(1).max(BOUNDS.wiringChanges).optional(),
    /** guard-files: whether the adapter put every one of them back as it was before the call. */
    undone: z.boolean().optional(),
  })
  .refine((r) => (r.kind === "wiring") === (r.wiring !== undefined), {
    message: "kind wiring carries `wiring`, and only it does",
    path: ["wiring"],
  })
  .refine(
    (r) =>
      r.kind === "shell-write"
        ? r.peers !== undefined && r.restorable !== undefined
        : SHELL_WRITE_FIELDS.every((f) => r[f] === undefined),
    {
      message: "kind shell-write carries `peers` and `restorable`, and only it does",
      path: ["peers"],
    },
  )
  .refine(
    (r) =>
      r.kind === "guard-files"
        ? r.files !== undefined && r.undone !== undefined && r.paths.length === 0
        : GUARD_FILES_FIELDS.every((f) => r[f] === undefined),
    {
      message: "kind guard-files carries `files` and `undone` (and no `paths`), and only it does",
      path: ["files"],
    },
  )
  .refine((r) => (r.kind === "refused" ? r.rule !== undefined : !(NOT_RULE_KINDS.has(r.kind) && r.rule)), {
    message: "kind refused names its `rule`; wiring, shell-write and guard-files are no refusal of a rule",
    path: ["rule"],
  })
  .refine((r) => r.between === undefined || r.kind === "shell-write", {
    message: "only kind shell-write carries `between`",
    path: ["between"],
  })
  .refine((r) => r.command === undefined || r.kind === "shell-write" || r.kind === "guard-files", {
    message: "only kinds shell-write and guard-files carry `command`",
    path: ["command"],
  });

/** The live claims of the other intents in the repository: what the adapter's Git guard and `commit` check against. Read-only. */
export const ScopesRequest = z.strictObject({
  type: z.literal("scopes"),
});

/** The open work intents of this token's person, with each session's guard status (doctor). */
export const StatusRequest = z.strictObject({
  type: z.literal("status"),
});

export const AckRequest = z.strictObject({
  type: z.literal("ack"),
  packetId: PacketId,
  chars: z.number().int().nonnegative().max(1_000_000),
});

/** The body of POST /api/agent. */
export const AgentRequest = z.discriminatedUnion("type", [
  PublishRequest,
  IntentRequest,
  ScopeRequest,
  CheckpointRequest,
  AckRequest,
  ContextRequest,
  GuardRequest,
  StatusRequest,
  ScopesRequest,
  ReleaseRequest,
]);

export type PublishRequest = z.infer<typeof PublishRequest>;
export type IntentRequest = z.infer<typeof IntentRequest>;
export type ScopeRequest = z.infer<typeof ScopeRequest>;
export type CheckpointRequest = z.infer<typeof CheckpointRequest>;
export type AckRequest = z.infer<typeof AckRequest>;
export type AgentRequest = z.infer<typeof AgentRequest>;
/** The body of POST /api/agent as a client sends it: the fields with a default may be left out. */
export type AgentRequestBody = z.input<typeof AgentRequest>;
export type ContextRequest = z.infer<typeof ContextRequest>;
export type GuardRequest = z.infer<typeof GuardRequest>;
export type WiringChange = z.infer<typeof WiringChange>;
export type ShellWritePeer = z.infer<typeof ShellWritePeer>;
export type WiringReport = z.infer<typeof WiringReport>;
export type StatusRequest = z.infer<typeof StatusRequest>;
export type ScopesRequest = z.infer<typeof ScopesRequest>;
export type ReleaseRequest = z.infer<typeof ReleaseRequest>;
export type CheckpointStatus = z.infer<typeof CheckpointStatus>;

/** Headers of every agent call, and of GET /api/agent (the poll). */
export const SessionHeader = z
  .string()
  .min(1)
  .max(BOUNDS.sessionChars)
  .regex(/^[A-Za-z0-9._:-]+$/, "letters, digits and . _ : -");
/** x-cohent-agent: the sub-agent (Claude Code's agent_id) a call is made for; same form as the session. */
export const AgentHeader = SessionHeader;
/** idempotency-key (REQUEST_ID_HEADER): a write's request id, the same on each of its retries. */
export const RequestIdHeader = z.string().regex(REQUEST_ID_PATTERN, "16 to 128 letters, digits and . _ : -");
export const Cursor = z.string().regex(/^\d{1,15}$/, "a cursor is a decimal event number");
export const PollRequest = z.strictObject({
  intentId: IntentId,
  cursor: Cursor.default("0"),
});
export type PollRequest = z.infer<typeof PollRequest>;
export const WaitHeader = z
  .string()
  .regex(/^\d{1,2}$/, "whole seconds")
  .transform(Number)
  .pipe(z.number().int().min(0).max(BOUNDS.waitSeconds));
