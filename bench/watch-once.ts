import { peersAt, watchedCall } from "./watch-cost.js";
import type { Level } from "./shell-watch-setup.js";

// One watched call in a fresh process (bench/watch-cost.ts's cold rows): its Pre and Post ms on stdout.
const [root, size, level, id] = process.argv.slice(2);
const t = await watchedCall(root!, peersAt(Number(size), Number(level) as Level), id!);
process.stdout.write(`${JSON.stringify(t)}\n`);
