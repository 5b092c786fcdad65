/**
 * Another worker process for the queue tests: opens the queue given as JSON in argv[2] (an
 * embedded folder or a Redis URL and prefix), runs every job it gets by writing
 * `<markers>/started-<jobId>` and then waiting until it is killed, so a test can kill it with
 * SIGKILL mid-job.
 */
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedQueue, openStoryQueue, type QueueConfig } from "../../src/queue/index.js";

const [spec, markers] = [process.argv[2], process.argv[3]];
if (!spec || !markers) throw new Error("usage: queue-child <queue config JSON> <markers dir>");
const config = JSON.parse(spec) as QueueConfig;
const queue = config.kind === "embedded" ? await EmbeddedQueue.open({ dir: config.dir, rescanMs: 50 }) : await openStoryQueue(config);
queue.start(async (lease) => {
  // Whole or absent: the test reads the marker as soon as its name appears.
  const name = `started-${encodeURIComponent(lease.jobId)}`;
  writeFileSync(join(markers, `tmp-${name}`), JSON.stringify({ pid: process.pid, interruptions: lease.interruptions }));
  renameSync(join(markers, `tmp-${name}`), join(markers, name));
  await new Promise(() => undefined);
});
setInterval(() => undefined, 1 << 30);
