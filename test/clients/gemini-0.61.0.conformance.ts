import { probeSuite } from "./probes.ts";

probeSuite("gemini@0.61.0");
