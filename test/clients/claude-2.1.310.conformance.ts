import { clientSuite } from "./suite.ts";

clientSuite("claude@2.1.310");
