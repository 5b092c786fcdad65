/**
 * A harness process for the ledger test: runs `sleep <tag>` inside a step scope with a ledger
 * in argv[2], writes `<dir>/spawned` once the sleep runs, and waits to be killed with SIGKILL.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec, ProcessLedger, runInStepScope } from "../../src/exec/index.js";

const [dir, seconds] = process.argv.slice(2);
if (!dir || !seconds) throw new Error("usage: ledger-child <dir> <seconds>");
const ledger = new ProcessLedger(join(dir, "ledger"));
void runInStepScope({ ledger }, () => exec(["sleep", seconds], { cwd: dir, onSpawn: () => writeFileSync(join(dir, "spawned"), "") }));
setInterval(() => undefined, 1 << 30);
