/**
 * The torture's history: one JSON object a line. A header with the run's timing model, every
 * operation (invoked, answered or not), every fault injected, and the final read of the database.
 * Times are milliseconds on one wall clock shared by the run's processes (performance.timeOrigin +
 * performance.now()), so that the real-time order of two processes' operations is known.
 */

export interface HistoryHeader {
  kind: "header";
  startedAt: number;
  /** The servers' lease (after this long without a call a session's claims may be freed). */
  leaseMs: number;
  /** How stale a stored lease renewal may be (backend renewEvery). */
  renewMs: number;
  /** The largest clock difference between two instances. */
  skewMs: number;
  /** How long an instance may answer a session from a stale cache (control, epoch). */
  staleMs: number;
  /** How long after its invoke an unanswered call may still take effect (default 30 s). */
  lingerMs?: number;
  instances: string[];
  database: string;
}

export type OpName =
  "publish" | "intent" | "scope" | "checkpoint" | "kill-switch" | "read" | "control" | "release";

export interface OpRecord {
  kind: "op";
  id: string;
  /** Who acted: agent:<name>, person, burst, overload. */
  process: string;
  /** The agent session key (x-cohent-session); for a person's command, the session it targets. */
  session: string;
  instance: string;
  op: OpName;
  /** The logical write (its idempotency key): every retry of one write carries the same. */
  write?: string;
  args: {
    intentId?: string;
    paths?: string[];
    status?: string;
    summary?: string;
    prompt?: string;
    objective?: string;
    /** control: pause | resume | cancel. */
    control?: string;
  };
  invokeAt: number;
  /** null: no answer (cut, timed out, the connection lost). */
  completeAt: number | null;
  /** ok: the server answered ok; fail: it answered an error; unknown: no answer. */
  outcome: "ok" | "fail" | "unknown";
  status?: number;
  code?: string;
  retryable?: boolean;
  /** meta.session.epoch of the answer. */
  epoch?: number;
  result?: { intentId?: string; paths?: string[]; action?: string };
}

export interface FaultRecord {
  kind: "fault";
  fault: string;
  /** What it hit: an instance's URL, an agent process, the database. */
  target: string;
  startAt: number;
  endAt: number;
  note?: string;
}

/** What the database holds at the end: how many times each write's marker is stored. */
export interface FinalRead {
  kind: "final";
  at: number;
  /** checkpoint summary → rows. */
  checkpoints: Record<string, number>;
  /** publish prompt → intents. */
  intents: Record<string, number>;
}

export type HistoryLine = HistoryHeader | OpRecord | FaultRecord | FinalRead;

export interface History {
  header: HistoryHeader;
  ops: OpRecord[];
  faults: FaultRecord[];
  final: FinalRead | null;
}

export function parseHistory(text: string): History {
  const lines = text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as HistoryLine);
  const header = lines.find((l): l is HistoryHeader => l.kind === "header");
  if (!header) throw new Error("history: no header line");
  return {
    header,
    ops: lines.filter((l): l is OpRecord => l.kind === "op"),
    faults: lines.filter((l): l is FaultRecord => l.kind === "fault"),
    final: lines.find((l): l is FinalRead => l.kind === "final") ?? null,
  };
}

export function historyText(h: History): string {
  return [h.header, ...h.faults, ...h.ops, ...(h.final ? [h.final] : [])]
    .map((l) => JSON.stringify(l))
    .join("\n")
    .concat("\n");
}
