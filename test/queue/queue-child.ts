/**
 * A second App process for the queue tests: opens the queue folder given as argv[2], runs
 * every job it gets by writing `<dir>/started-<jobId>` and then waiting until it is killed,
 * so a test can kill it with SIGKILL mid-job.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedQueue } from "../../src/queue/index.js";

const dir = process.argv[2];
if (!dir) throw new Error("usage: queue-child <queueDir>");
const queue = await EmbeddedQueue.open({ dir, rescanMs: 50 });
queue.start(async (lease) => {
  writeFileSync(join(dir, `started-${lease.jobId}`), JSON.stringify({ pid: process.pid, interruptions: lease.interruptions }));
  await new Promise(() => undefined);
});
setInterval(() => undefined, 1 << 30);
