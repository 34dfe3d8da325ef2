import { readFileSync } from "node:fs";
import http from "node:http";

/**
 * "/healthz answers within N ms throughout", on a shared 2-core machine. A
 * poller asks a server under attack for /healthz every 20 ms and times each
 * answer. What the machine adds is taken out, measured, not guessed: the
 * time the server's main thread (its event loop) and this process's main
 * thread spent runnable but waiting for a CPU during that answer (Linux
 * /proc/<pid>/task/<pid>/schedstat). What is left is the server's own: its
 * event loop busy with something else, or blocked in a synchronous wait.
 * The CPU time the server's main thread ran during the answer is never
 * taken out, so a loop that computes while this process also waits cannot
 * hide behind that wait. Without schedstat (not Linux) nothing is taken out.
 */

export interface Sample {
  ms: number;
  /** Run-queue wait of the server's and this process's main threads over the answer, in ms. */
  waitMs: number;
  /** CPU time the server's main thread ran over the answer, in ms. */
  cpuMs: number;
  ok: boolean;
  /** What the caller said was in flight when the request started. */
  during: string;
}

/** A main thread's time on a CPU and waiting for one so far, in ms; zeros where the kernel does not say. */
export function schedstat(pid: number): { cpu: number; wait: number } {
  try {
    const [cpu, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(/\s+/);
    return { cpu: Number(cpu) / 1e6, wait: Number(wait) / 1e6 };
  } catch {
    return { cpu: 0, wait: 0 };
  }
}

export interface Poller {
  stop(): Promise<Sample[]>;
}

/** GET `url` one request after another, every `everyMs`, on one keep-alive connection, until stopped. */
export function poll(url: string, serverPid: number, during: () => string = () => "", everyMs = 20): Poller {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples: Sample[] = [];
  const sched = () => {
    const server = schedstat(serverPid);
    return { cpu: server.cpu, wait: server.wait + schedstat(process.pid).wait };
  };
  let running = true;
  const once = () =>
    new Promise<void>((resolve) => {
      const what = during();
      const before = sched();
      const start = performance.now();
      const done = (ok: boolean) => {
        const ms = performance.now() - start;
        const after = sched();
        samples.push({
          ms,
          waitMs: Math.min(ms, Math.max(0, after.wait - before.wait)),
          cpuMs: Math.max(0, after.cpu - before.cpu),
          ok,
          during: what,
        });
        resolve();
      };
      const req = http.get(url, { agent, timeout: 60_000 }, (res) => {
        res.resume();
        res.on("end", () => done(res.statusCode === 200));
      });
      req.on("timeout", () => req.destroy(new Error("no answer within 60 s")));
      req.on("error", () => done(false));
    });
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      await once();
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (performance.now() - t))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      agent.destroy();
      return samples;
    },
  };
}

export interface Verdict {
  polled: number;
  failed: number;
  p50: number;
  /** The slowest answer, wall time. */
  max: number;
  /** The slowest answer once the machine's run-queue waits are taken out: the server's own delay. */
  maxOwn: number;
  /** Answers over the limit, wall time, each with its run-queue wait, the server's CPU time and what is the server's. */
  slow: { ms: number; waitMs: number; cpuMs: number; own: number; during: string }[];
}

/** Judges samples against `limitMs`. */
export function judge(samples: Sample[], limitMs: number): Verdict {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const own = (s: Sample) => Math.max(s.cpuMs, s.ms - s.waitMs);
  return {
    polled: samples.length,
    failed: samples.filter((s) => !s.ok).length,
    p50: sorted[Math.floor(sorted.length / 2)] ?? 0,
    max: sorted.at(-1) ?? 0,
    maxOwn: Math.max(0, ...samples.map(own)),
    slow: samples
      .filter((s) => s.ms > limitMs)
      .map((s) => ({ ms: s.ms, waitMs: s.waitMs, cpuMs: s.cpuMs, own: own(s), during: s.during })),
  };
}
