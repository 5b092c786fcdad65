/**
 * A process that enqueues jobs through the write-ahead log without end (argv[2]: the queue
 * folder, argv[3]: a file to which each answered enqueue's job id is appended, synchronously,
 * as soon as it is answered), until it is killed (kill -9 by the test, mid-write).
 */
import { appendFileSync } from "node:fs";
import { EmbeddedQueue } from "../../../src/queue/index.js";
import { makeJob } from "../helpers.js";

const [dir, answered] = process.argv.slice(2);
if (!dir || !answered) throw new Error("usage: wal-child <queueDir> <answeredFile>");
const queue = await EmbeddedQueue.open({ dir, writeAheadLog: true, rescanMs: 3_600_000, walSegmentBytes: 8192 });
let issue = 0;
// A few enqueues in flight at once, so batches hold several records (group commit).
const lane = async (): Promise<never> => {
  for (;;) {
    const n = (issue += 1);
    const outcome = await queue.enqueue(makeJob(n, `child-${n}`));
    if (outcome.accepted) appendFileSync(answered, `${outcome.jobId} child-${n}\n`);
  }
};
await Promise.all([lane(), lane(), lane(), lane()]);
