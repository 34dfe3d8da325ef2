import { probeSuite } from "./probes.ts";

probeSuite("opencode@1.18.33");
