import { probeSuite } from "./probes.ts";
import { clientSuite } from "./suite.ts";

// The stand-in probes (what the client does), then the adapter's scenarios through init's wiring.
probeSuite("opencode@1.15.13");
clientSuite("opencode@1.15.13");
