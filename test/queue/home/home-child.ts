/**
 * Another App process for the data-directory test: claims the HARNESS_HOME given as argv[2],
 * writes `<home>/claimed-<pid>` and waits until it is killed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { claimHarnessHome } from "../../../src/queue/index.js";

const home = process.argv[2];
if (!home) throw new Error("usage: home-child <harnessHome>");
await claimHarnessHome(home);
writeFileSync(join(home, `claimed-${process.pid}`), "");
setInterval(() => undefined, 1 << 30);
