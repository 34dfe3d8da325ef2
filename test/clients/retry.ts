// The real-client suite's one retry, and when a pass on that retry counts. A scenario that fails
// is run once more in a fresh workspace, and its first failure is always printed. A pass on the
// retry counts only when that first failure is one of the machine's causes below, each recognised
// by what it leaves behind; anything else is the product's (or the suite's) and fails the suite
// even though the retry passed. An unrecognised cause therefore fails: the safe direction.
import os from "node:os";

/** What a failed attempt leaves to judge it by. */
export interface FirstFailure {
  /** The attempt's error: the thrown message with its stack, or the failed checks. */
  error: string;
  /** Each client run of the attempt: its exit code (null when killed by a signal) and stderr. */
  runs: { code: number | null; stderr: string }[];
  /** The 1-minute load average and the number of CPUs when the attempt ended. */
  load: { avg1: number; cpus: number };
}

export interface MachineCause {
  id: string;
  /** What it is and how it is recognised. */
  what: string;
  recognised(f: FirstFailure): boolean;
}

/** harness.ts appends this to a run's stderr when it kills the client at COHENT_CLIENTS_RUN_TIMEOUT_MS. */
const KILLED = /\[harness\] killed after \d+ ms/;
/** "Loaded": the 1-minute load average at least 1.5 runnable processes per CPU. */
export const LOADED_PER_CPU = 1.5;

const anywhere = (f: FirstFailure, re: RegExp) => re.test(f.error) || f.runs.some((r) => re.test(r.stderr));

export const MACHINE_CAUSES: readonly MachineCause[] = [
  {
    id: "run-timeout-under-load",
    what: `a client run killed by the harness's run timeout (its stderr ends "[harness] killed after N ms", no exit code) while the 1-minute load average was at least ${LOADED_PER_CPU} per CPU`,
    recognised: (f) =>
      f.runs.some((r) => r.code === null && KILLED.test(r.stderr)) &&
      f.load.avg1 >= LOADED_PER_CPU * f.load.cpus,
  },
  {
    id: "disk-full",
    what: 'the disk filled up: ENOSPC or "No space left on device" in the error or a run\'s stderr',
    recognised: (f) => anywhere(f, /\bENOSPC\b|No space left on device/),
  },
  {
    id: "port-in-use",
    what: "a port was taken (the fake model's or the backend's listen failed): EADDRINUSE in the error or a run's stderr",
    recognised: (f) => anywhere(f, /\bEADDRINUSE\b|address already in use/),
  },
  {
    id: "out-of-resources",
    what: "the machine ran out of file descriptors, memory or processes: EMFILE, ENFILE, ENOMEM or spawn EAGAIN in the error or a run's stderr",
    recognised: (f) => anywhere(f, /\bE[MN]FILE\b|\bENOMEM\b|\bspawn \S* ?EAGAIN\b/),
  },
];

/** The machine cause that explains a first failure, or null: then a pass on the retry still fails the suite. */
export function machineCause(f: FirstFailure): MachineCause | null {
  return MACHINE_CAUSES.find((c) => c.recognised(f)) ?? null;
}

export function currentLoad(): FirstFailure["load"] {
  return { avg1: os.loadavg()[0]!, cpus: os.availableParallelism() };
}
