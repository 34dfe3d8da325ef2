import { wiringSuite } from "./wiring-suite.ts";

wiringSuite("opencode");
