/**
 * @cohent/client: what the hooks, the CLIs, the stdio MCP server and the server's /mcp use to act as
 * an agent of a checkout. Nothing outside this package imports its files; this list is the offer.
 * package.json marks the package free of side effects, so a bundle keeps only what it uses.
 */

// The one operation layer: every transport parses a request into an operation and calls perform().
export { perform, isOperation, OPERATIONS, type Inputs, type Operation } from "./operations.js";
export { fail, failFrom, ok, type Envelope } from "./envelope.js";

// The checkout's server calls the transports make themselves (the rest go through perform()).
export {
  ack,
  checkpoint,
  claim,
  connection,
  endScope,
  openCheckout,
  poll,
  queuePlace,
  reportGuard,
  reportGuardFiles,
  reportHost,
  reportWiring,
  session,
  type Checkout,
} from "./service/client.js";
export { health, postAgent, requestJson, type AgentSender } from "./service/http.js";
export { noticeText, onPacket, takeNotices } from "./service/notices.js";
export { adapterVersionVerdict, recordedVersionVerdict } from "./service/version.js";
export { queuedUnwaited, waitSeconds, type WaitOutcome } from "./scope-wait.js";

// A session's state on disk: the checkout's runtime file, its lock, which session a call belongs to.
export {
  emptySession,
  liveSessions,
  LIVE_MS,
  readRuntime,
  relayKey,
  SessionFile,
  updateRuntime,
  type PublishMark,
  type Refusal,
  type Relay,
  type Runtime,
  type SessionState,
  type Subagents,
} from "./state/runtime.js";
export { lockFile } from "./state/lock-file.js";
export { cliSessionId, mcpSessionId, selectSession } from "./state/session.js";
export {
  credentialsFile,
  findRoot,
  readCredential,
  readProject,
  saveCredential,
  type Project,
} from "./state/config.js";
export { cohentCacheDir } from "./state/cache-dir.js";
export { ON_FAILURE_FROM, SPAWN_FREE_DIR } from "./state/spawn-free.js";
export { recordUsage, usageTarget } from "./state/usage.js";
export { usageCommand } from "./state/usage-report.js";

// Git, as the guard and the commit operation read it, and the peers' scopes it checks against.
export { git, nulList } from "./git/run.js";
export { gitSync, isSafeRevision, topLevel } from "./git/git.js";
export { activePeers } from "./git/commit-op.js";
export { inert, ownerOf, unsureNote, type PeerScope, type Scopes } from "./git/peer-scopes.js";

// Small shared pieces: lazily loaded Node built-ins, redaction, file URLs.
export { childProcess, crypto, os } from "./builtins.js";
export { redact, scrubPaths } from "./redact.js";
export { fileUrlOf, pathOfFileUrl } from "./file-url.js";
