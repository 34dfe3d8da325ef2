import type { Probe } from "./probes-copilot.ts";
export const GEMINI_PROBES: Probe[] = [];
