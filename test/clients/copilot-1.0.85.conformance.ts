import { probeSuite } from "./probes.ts";

probeSuite("copilot@1.0.85");
