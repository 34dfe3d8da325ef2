import type { Probe } from "./probes-copilot.ts";
export const OPENCODE_PROBES: Probe[] = [];
