import { writeFileSync } from "node:fs";
import { protocolDoc } from "../protocol/src/index.js";

writeFileSync(new URL("../docs/protocol.md", import.meta.url), protocolDoc());
