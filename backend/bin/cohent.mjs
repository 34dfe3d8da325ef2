#!/usr/bin/env node
// The admin CLI runs the TypeScript sources through tsx: no build step between `npm install` and `npx cohent`.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli.ts");
await main();
