import { clientSuite } from "./suite.ts";

clientSuite("codex@0.171.0");
