/**
 * A process whose only work is one write through the queue's file thread (argv[2]: the path),
 * not awaited by anything else: it must stay up until the write is answered ("written" on
 * stdout), then end by itself, the idle thread keeping nothing alive.
 */
import { JobFileWorker } from "../../../src/queue/job-file-worker.js";

const path = process.argv[2];
if (!path) throw new Error("usage: writer-child <path>");
void JobFileWorker.start()
  .write(path, "{}\n")
  .then(() => process.stdout.write("written\n"));
