import { probeSuite } from "./probes.ts";
import { clientSuite } from "./suite.ts";

// The stand-in probes (what the client does), then the adapter's scenarios through init's wiring.
probeSuite("gemini@0.58.0");
clientSuite("gemini@0.58.0");
