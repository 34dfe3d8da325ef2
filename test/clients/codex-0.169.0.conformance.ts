import { clientSuite } from "./suite.ts";

clientSuite("codex@0.169.0");
