import { probeSuite } from "./probes.ts";
import { clientSuite } from "./suite.ts";

// The stand-in probes (what the client does), then the adapter's scenarios through init's wiring.
probeSuite("copilot@1.0.85");
clientSuite("copilot@1.0.85");
