import { readFileSync, writeSync } from "node:fs";
import { isHost } from "@cohent/protocol/hosts";
import { CLAUDE } from "../hosts/claude.js";
import { DIALECTS, hostFlag } from "../hosts/detect.js";
import { loaderHandoff } from "../loader/loader-handoff.js";
import { findRoot } from "@cohent/client";
import { armDeadline } from "./deadline.js";
import { runHook, type HookPart } from "./hook.js";
import { recordHookUsage } from "./hook-usage.js";

/**
 * The `hook` command (main.ts): the payload in, the answer out, the deadline
 * armed around both, and the usage ledger's row.
 */

/**
 * The hook payload. Clients hand it over on a pipe, which a synchronous read
 * takes whole without creating process.stdin (a net.Socket and its stream
 * machinery: measurable on every tool call). A non-blocking descriptor
 * (EAGAIN) falls back to the stream.
 */
function readStdin(): Promise<string> {
  // cohent.mjs's loader reads the payload first, to end calls that need no decision before the bundle loads.
  const loaded = loaderHandoff()?.stdin;
  if (loaded !== undefined) return Promise.resolve(loaded);
  try {
    return Promise.resolve(readFileSync(0, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAGAIN") return Promise.reject(err);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on("data", (c: Buffer) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

/**
 * The hook's answer, written straight to the descriptor: process.stdout and
 * process.stderr are lazy getters that build a stream (and load the stream
 * modules) on first touch, a cost every tool call would pay. A non-blocking
 * descriptor (EAGAIN) hands the rest to the stream; a reader that is gone
 * (EPIPE) gets nothing.
 */
function writeFd(out: string | undefined, fd: 1 | 2): void {
  if (!out) return;
  const buf = Buffer.from(out.endsWith("\n") ? out : out + "\n", "utf8");
  let at = 0;
  try {
    while (at < buf.length) at += writeSync(fd, buf, at);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EAGAIN") (fd === 1 ? process.stdout : process.stderr).write(buf.subarray(at));
    else if (code !== "EPIPE") throw err;
  }
}

/** Runs one hook call with the adapter's handlers: its exit code. */
export async function hookCommand(rest: string[], part: HookPart, scriptUrl: string): Promise<number> {
  // Fail closed: a refusal of our own before the client's hook timeout lets the tool run (deadline.ts).
  const host = hostFlag(rest);
  const watch = armDeadline(host === null ? CLAUDE : isHost(host) ? DIALECTS[host] : null);
  // hrtime, not performance.now(): the global `performance` loads perf_hooks on first touch.
  const started = process.hrtime.bigint();
  const root = findRoot(process.cwd(), scriptUrl);
  const stdin = await readStdin();
  const result = await runHook(part, stdin, root, scriptUrl, watch, host);
  writeFd(result.stdout, 1);
  writeFd(result.stderr, 2);
  recordHookUsage(root, result, Number(process.hrtime.bigint() - started) / 1e6);
  watch.disarm();
  return result.exitCode;
}
