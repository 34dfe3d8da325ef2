import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Logger } from "pino";
import { CohentError, failure, WAIT_HEADER } from "@cohent/protocol";
import { baseMeta } from "./envelope.js";

/**
 * Admission past capacity. When this instance is saturated, an agent's request is answered at once
 * with a retryable 503 OVERLOADED and a Retry-After, before Koa or the database sees it, instead of
 * queueing with the others until every answer takes tens of seconds. Saturated: more agent requests
 * in flight than `maxInFlight` (they wait on the database), or the event loop behind by more than
 * `maxLagMs` (CPU: the kernel's accept queue then grows where nothing here can see it).
 *
 * Never refused here: the kill-switch read (every tool call's), a person's commands (the Control
 * Room's API, pairing), health checks and the UI. A long-poll is not counted in flight (it waits on
 * nothing); a new one is refused while saturated, and the jittered Retry-After spreads the re-arms.
 */
export interface AdmissionLimits {
  /** Agent requests being answered at once (long-polls not counted). */
  maxInFlight: number;
  /** The event loop's mean delay, over each of the last two quarter seconds (one long task, a migration, is no saturation). */
  maxLagMs: number;
}

export const DEFAULT_ADMISSION: AdmissionLimits = { maxInFlight: 512, maxLagMs: 500 };

/** COHENT_ADMISSION=off turns it off; COHENT_MAX_IN_FLIGHT and COHENT_MAX_LAG_MS set the limits. */
export function admissionFromEnv(env = process.env): AdmissionLimits | null {
  if (env.COHENT_ADMISSION === "off" || env.COHENT_ADMISSION === "0") return null;
  const num = (raw: string | undefined, fallback: number) => {
    const n = Number(raw);
    return raw && Number.isFinite(n) && n > 0 ? n : fallback;
  };
  return {
    maxInFlight: num(env.COHENT_MAX_IN_FLIGHT, DEFAULT_ADMISSION.maxInFlight),
    maxLagMs: num(env.COHENT_MAX_LAG_MS, DEFAULT_ADMISSION.maxLagMs),
  };
}

/** What a request is to admission: refused when saturated, counted in flight, or always let in. Pure. */
export type Kind = "counted" | "long-poll" | "always";

export function kindOf(method: string | undefined, url: string | undefined, waitHeader?: string): Kind {
  const path = (url ?? "").split("?")[0]!.replace(/\/+$/, "");
  if (path === "/mcp") return "counted";
  if (path === "/api/agent/session" || !(path === "/api/agent" || path.startsWith("/api/agent/")))
    return "always";
  if ((method === "GET" || method === "HEAD") && path === "/api/agent" && Number(waitHeader) > 0)
    return "long-poll";
  return "counted";
}

/** Seconds to wait: 1-3, drawn per refusal, so refused agents do not come back together. */
export const retryAfterSeconds = (random = Math.random()): number => 1 + Math.floor(random * 3);

const WARN_EVERY_MS = 10_000;

export class Admission {
  private inFlight = 0;
  /** The mean delay of the last two windows. */
  private lagMs = [0, 0];
  private refused = 0;
  private warnedAt = -Infinity;
  private readonly delay = monitorEventLoopDelay({ resolution: 10 });
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly log: Logger,
    private readonly clock: () => Date,
  ) {
    this.delay.enable();
    this.timer = setInterval(() => {
      this.lagMs = [this.lagMs[1]!, this.delay.count > 0 ? this.delay.mean / 1e6 : 0];
      this.delay.reset();
    }, 250);
    this.timer.unref();
  }

  saturated(): boolean {
    return this.inFlight >= this.limits.maxInFlight || Math.min(...this.lagMs) > this.limits.maxLagMs;
  }

  /** The server's request handler with admission in front of it. */
  wrap(handler: (req: IncomingMessage, res: ServerResponse) => void) {
    return (req: IncomingMessage, res: ServerResponse): void => {
      const kind = kindOf(req.method, req.url, req.headers[WAIT_HEADER] as string | undefined);
      if (kind === "always") return handler(req, res);
      if (this.saturated()) return this.refuse(req, res);
      if (kind === "counted") {
        this.inFlight++;
        res.once("close", () => this.inFlight--);
      }
      handler(req, res);
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.delay.disable();
  }

  private refuse(req: IncomingMessage, res: ServerResponse): void {
    this.refused++;
    const now = performance.now();
    if (now - this.warnedAt >= WARN_EVERY_MS) {
      this.log.warn(
        {
          refused: this.refused,
          inFlight: this.inFlight,
          lagMs: Math.round(Math.min(...this.lagMs)),
          ...this.limits,
        },
        "at capacity: agent requests answered 503 OVERLOADED with Retry-After",
      );
      this.warnedAt = now;
      this.refused = 0;
    }
    const retryAfter = retryAfterSeconds();
    // The wait in the envelope too: the adapter's transports read envelopes, not headers.
    const error = new CohentError("OVERLOADED", undefined, { retryAfterSeconds: retryAfter });
    const body = JSON.stringify(failure("http", error, baseMeta(this.clock)));
    // A request without a body keeps its connection (a reconnect costs more than the answer); one
    // with a body closes it after the answer, which is sent without reading that body.
    const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || !!req.headers["transfer-encoding"];
    res.writeHead(error.status, http.STATUS_CODES[error.status], {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "retry-after": String(retryAfter),
      ...(hasBody ? { connection: "close" } : {}),
    });
    res.end(body);
  }
}
