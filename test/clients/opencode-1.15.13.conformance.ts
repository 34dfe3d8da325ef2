import { probeSuite } from "./probes.ts";

probeSuite("opencode@1.15.13");
