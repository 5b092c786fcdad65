/**
 * Child of json-log.test.ts: logs one line through the App's JSON logger, waits (at most a
 * minute) for the file the test creates once it read that line, logs a second line and exits
 * normally at once: the first line must be written while the process lives, well under a batch's
 * bytes; the second only by the flush at exit.
 */
import { existsSync } from "node:fs";
import { asyncJsonLog } from "../../src/cli/json-log.js";

const go = process.argv[2] as string;
const log = asyncJsonLog({ LOG_FORMAT: "json" });
log?.info({ step: 1 }, "first line");
const deadline = Date.now() + 60_000;
const timer = setInterval(() => {
  if (!existsSync(go) && Date.now() < deadline) return;
  clearInterval(timer);
  log?.info({ step: 2 }, "last line");
  process.exit(0);
}, 10);
