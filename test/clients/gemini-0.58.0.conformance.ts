import { probeSuite } from "./probes.ts";

probeSuite("gemini@0.58.0");
