// @ts-check
/**
 * The queue's file thread: the code `JobFileWorker` (job-file-worker.ts) runs in a worker thread.
 * Plain JavaScript, type-checked through its JSDoc, so the same file runs as it is under tsx, jest
 * and the compiled App (a worker thread does not go through jest's TypeScript transform).
 *
 * Mutation testing cannot reach this file: Stryker activates a mutant in the test's own thread,
 * never in a worker thread, so it is not in the queue room's mutate list (`*.ts` only); what it
 * does is tested through `JobFileWorker` (test/queue/embedded/job-file-worker.test.ts, job-store.test.ts).
 *
 * Messages (each with the `id` its answer carries):
 *   { kind: "write", writes: [{ path, data }] } → { id, errors: [null | { message, code }] }
 *   { kind: "read", paths: [path] }             → { id, files: [{ text } | { code, message }] }
 *   { kind: "flush" }                           → { id } once everything written is on stable storage
 */
import { parentPort } from "node:worker_threads";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";

/** The longest a written file waits before its flush to stable storage starts. */
const FLUSH_DELAY_MS = 25;

if (!parentPort) throw new Error("job-file-thread.js runs as a worker thread (JobFileWorker.start)");
const port = parentPort;

/** @type {Set<string>} Written, not yet flushed. */
let pending = new Set();
/** @type {Promise<void> | null} The running (or scheduled) flush. */
let flushing = null;
/** @type {number[]} Flush requests answered when the running flush ends. */
const flushWaiters = [];

/**
 * Writes `data` to `path` through a temp file beside it and a rename: never torn.
 * @param {string} path
 * @param {string} data
 */
function writeAtomic(path, data) {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  /** @type {number | undefined} */
  let fd;
  try {
    fd = fs.openSync(temp, "wx", 0o644);
    fs.writeSync(fd, data);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) {
      try {
        fs.closeSync(fd);
      } catch {
        // Closing after a failed write: the write's error is the one to tell.
      }
    }
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/** @param {string} path */
async function syncPath(path) {
  try {
    const handle = await fsp.open(path, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Gone already (a finished job is removed), or a folder that refuses fsync: nothing left to flush.
  }
}

function scheduleFlush() {
  if (flushing) return;
  flushing = new Promise((resolve) => setTimeout(resolve, FLUSH_DELAY_MS)).then(async () => {
    while (pending.size > 0) {
      const paths = [...pending];
      pending = new Set();
      for (const path of paths) await syncPath(path);
      for (const dir of new Set(paths.map((path) => dirname(path)))) await syncPath(dir);
    }
    flushing = null;
    for (const id of flushWaiters.splice(0)) port.postMessage({ id });
  });
}

/**
 * @param {string} path
 * @returns {{ text: string } | { code: string; message: string }}
 */
function readText(path) {
  try {
    return { text: fs.readFileSync(path, "utf8") };
  } catch (error) {
    const failure = /** @type {NodeJS.ErrnoException} */ (error);
    return { code: String(failure.code), message: String(failure.message) };
  }
}

port.on(
  "message",
  /** @param {{ id: number } & ({ kind: "write"; writes: { path: string; data: string }[] } | { kind: "read"; paths: string[] } | { kind: "flush" })} message */
  (message) => {
    if (message.kind === "read") {
      port.postMessage({ id: message.id, files: message.paths.map(readText) });
      return;
    }
    if (message.kind === "flush") {
      if (!flushing && pending.size === 0) port.postMessage({ id: message.id });
      else flushWaiters.push(message.id);
      return;
    }
    // A batch of writes (every enqueue of one turn of the App's event loop): one answer for all.
    const errors = message.writes.map(({ path, data }) => {
      try {
        writeAtomic(path, data);
      } catch (error) {
        const failure = /** @type {NodeJS.ErrnoException} */ (error);
        return { message: String(failure.message), code: failure.code };
      }
      pending.add(path);
      return null;
    });
    port.postMessage({ id: message.id, errors });
    scheduleFlush();
  },
);
