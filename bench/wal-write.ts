/**
 * The write-ahead log's write on the event loop: how long a record's `writeSync` holds the loop
 * while the segment's `fdatasync` runs in the background (as `src/queue/wal/appender.ts` does),
 * against the thread-pool `write` the appender used before (the time a record waited for its
 * callback). Records of 2 KiB (one webhook's), one a millisecond, one sync in flight at a time.
 *
 *   npm run bench -- wal-write [--records 2000] [--reps 6] [--dir <folder on the disk to measure>]
 */
import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, write, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { formatPaired, measurePaired, quantile } from "./lib/paired.js";

const { values } = parseArgs({
  options: { records: { type: "string", default: "2000" }, reps: { type: "string", default: "6" }, dir: { type: "string", default: tmpdir() } },
});
const RECORDS = Number(values.records);
const REPS = Number(values.reps);
const RECORD = Buffer.alloc(2048, "x");

type Append = (fd: number) => Promise<number>;

/** The appender's way: the bytes into the page cache on the loop; milliseconds the loop was held. */
const onLoop: Append = async (fd) => {
  const started = performance.now();
  writeSync(fd, RECORD, 0, RECORD.length, null);
  return performance.now() - started;
};

/** The way before: the write handed to the thread pool; milliseconds until its callback. */
const inPool: Append = (fd) =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    write(fd, RECORD, 0, RECORD.length, null, (error) => (error ? reject(error) : resolve(performance.now() - started)));
  });

/** Every record's wait, appended to a new segment while one fdatasync after another runs on it. */
async function appendAll(append: Append): Promise<{ waits: number[]; syncs: number }> {
  const folder = mkdtempSync(join(values.dir, "harness-bench-wal-"));
  const fd = openSync(join(folder, "000001.wal"), "a");
  const waits: number[] = [];
  let syncing = false;
  let syncs = 0;
  let idle: (() => void) | undefined;
  try {
    for (let index = 0; index < RECORDS; index += 1) {
      waits.push(await append(fd));
      if (!syncing) {
        syncing = true;
        fdatasync(fd, () => {
          syncing = false;
          syncs += 1;
          idle?.();
        });
      }
      await new Promise((wake) => setTimeout(wake, 1));
    }
    if (syncing) await new Promise<void>((resolve) => (idle = resolve));
    return { waits, syncs };
  } finally {
    closeSync(fd);
    rmSync(folder, { recursive: true, force: true });
  }
}

const worst = { onLoop: 0, inPool: 0 };
let syncCount = 0;
/** One side of a pair: the p99 of its records' waits. */
const p99 = (append: Append, side: keyof typeof worst) => async (): Promise<number> => {
  const { waits, syncs } = await appendAll(append);
  worst[side] = Math.max(worst[side], ...waits);
  syncCount += syncs;
  return quantile(waits, 0.99);
};

console.log(`${RECORDS} records of ${RECORD.length} bytes a repetition, one a millisecond, fdatasync running beside them`);
const result = await measurePaired(p99(onLoop, "onLoop"), p99(inPool, "inPool"), REPS);
console.log(formatPaired("p99 wait per record, writeSync on the loop ÷ write in the thread pool", result));
console.log(`  median p99: on the loop ${(result.medianSubjectMs * 1000).toFixed(0)} µs, in the pool ${(result.medianBaselineMs * 1000).toFixed(0)} µs`);
console.log(`  worst single record: on the loop ${worst.onLoop.toFixed(3)} ms, in the pool ${worst.inPool.toFixed(3)} ms; ${syncCount} fdatasync calls in all`);
