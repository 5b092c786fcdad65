/**
 * The queue's file work, off the event loop. The webhook's durable write: one worker thread per queue writes job
 * files (temp file beside the target, then a rename: never torn), answers as soon as the
 * rename is done — the kernel holds the file, so the App dying (kill -9) cannot lose it — and
 * then flushes what it wrote to stable storage (fsync of each file and of the folder) in
 * batches, while it keeps taking writes. A burst of webhooks costs the event loop one message
 * per turn of its loop (the jobs enqueued in that turn, together) instead of four thread-pool
 * round trips per job, and an open() that waits on the folder behind a running fsync waits in
 * the worker, not in the App.
 *
 * The same thread reads job files in bulk for a (re)scan: thousands of small files read one
 * after the other with plain system calls in the worker, handed back in one message per
 * chunk, instead of four thread-pool round trips per file.
 */
import { Worker } from "node:worker_threads";

/** The worker's code: plain JavaScript, so the same thread runs under tsx, jest and the compiled App. */
const WORKER_SOURCE = String.raw`
const { parentPort } = require("node:worker_threads");
const fs = require("node:fs");
const fsp = require("node:fs/promises");
const { randomBytes } = require("node:crypto");
const { dirname } = require("node:path");

const DELAY_MS = Number(require("node:worker_threads").workerData.flushDelayMs);
let pending = new Set();
let flushing = null;
const flushWaiters = [];

function writeAtomic(path, data) {
  const temp = path + "." + process.pid + "." + randomBytes(4).toString("hex") + ".tmp";
  let fd;
  try {
    fd = fs.openSync(temp, "wx", 0o644);
    fs.writeSync(fd, data);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) try { fs.closeSync(fd); } catch {}
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

async function syncPath(path) {
  try {
    const handle = await fsp.open(path, "r");
    try { await handle.sync(); } finally { await handle.close(); }
  } catch {
    // Gone already (a finished job is removed), or a folder that refuses fsync: nothing left to flush.
  }
}

function scheduleFlush() {
  if (flushing) return;
  flushing = new Promise((resolve) => setTimeout(resolve, DELAY_MS)).then(async () => {
    while (pending.size > 0) {
      const paths = [...pending];
      pending = new Set();
      for (const path of paths) await syncPath(path);
      for (const dir of new Set(paths.map((path) => dirname(path)))) await syncPath(dir);
    }
    flushing = null;
    for (const id of flushWaiters.splice(0)) parentPort.postMessage({ id });
  });
}

function readText(path) {
  try {
    return { text: fs.readFileSync(path, "utf8") };
  } catch (error) {
    return { code: String(error && error.code), message: String(error && error.message) };
  }
}

parentPort.on("message", (message) => {
  if (message.kind === "read") {
    parentPort.postMessage({ id: message.id, files: message.paths.map(readText) });
    return;
  }
  if (message.kind === "flush") {
    if (!flushing && pending.size === 0) parentPort.postMessage({ id: message.id });
    else flushWaiters.push(message.id);
    return;
  }
  // A batch of writes (every enqueue of one turn of the App's event loop): one answer for all.
  const errors = message.writes.map(({ path, data }) => {
    try {
      writeAtomic(path, data);
    } catch (error) {
      return { message: String(error && error.message), code: error && error.code };
    }
    pending.add(path);
    return null;
  });
  parentPort.postMessage({ id: message.id, errors });
  scheduleFlush();
});
`;

/** One file as read by the worker: its text, or why it could not be read. */
export type ReadResult = { text: string } | { code: string; message: string };

interface WriteError { message: string; code?: string }

interface Reply {
  id: number;
  /** Per write of a batch, in order: null when it was written. */
  errors?: (WriteError | null)[];
  files?: ReadResult[];
}

interface Write { path: string; data: string; resolve: () => void; reject: (error: Error) => void }

/** The longest a written file waits before its flush to stable storage starts. */
export const JOB_FLUSH_DELAY_MS = 25;

/** A worker thread that writes job files atomically and reads them in bulk; see the file's comment for when a write is durable. */
export class JobFileWorker {
  private readonly waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  /** Writes asked in this turn of the event loop, sent together at its end. */
  private batch: Write[] = [];
  private nextId = 0;
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on("message", (reply: Reply) => {
      const waiter = this.waiting.get(reply.id);
      if (!waiter) return;
      this.waiting.delete(reply.id);
      waiter.resolve(reply);
    });
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => this.fail(new Error(`the job writer thread exited (code ${code})`)));
    // Idle, it must not keep the App alive; while a write waits, the message port does.
    worker.unref();
  }

  /** Starts the writer thread. */
  static start(options: { flushDelayMs?: number } = {}): JobFileWorker {
    return new JobFileWorker(new Worker(WORKER_SOURCE, { eval: true, workerData: { flushDelayMs: options.flushDelayMs ?? JOB_FLUSH_DELAY_MS } }));
  }

  /**
   * Writes `data` to `path` atomically; resolves when it is visible and safe from this process
   * dying. Writes asked in one turn of the event loop go to the thread in one message: under a
   * burst of webhooks the hand-off between threads is paid once per turn, not once per job.
   */
  write(path: string, data: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      if (this.batch.length === 0) setImmediate(() => this.sendBatch());
      this.batch.push({ path, data, resolve, reject });
    });
  }

  private sendBatch(): void {
    const writes = this.batch.splice(0);
    if (writes.length === 0) return;
    this.ask({ kind: "write", writes: writes.map(({ path, data }) => ({ path, data })) }).then(
      (reply) => writes.forEach((write, index) => {
        const failed = reply.errors?.[index];
        if (!failed) return write.resolve();
        const error = new Error(failed.message) as NodeJS.ErrnoException;
        if (failed.code) error.code = failed.code;
        write.reject(error);
      }),
      (error: Error) => writes.forEach((write) => write.reject(error)),
    );
  }

  /** Reads files, in order; a file that cannot be read gives its error code (ENOENT: gone). */
  async read(paths: readonly string[]): Promise<ReadResult[]> {
    return (await this.ask({ kind: "read", paths })).files ?? [];
  }

  /** Resolves when everything written so far is on stable storage. */
  async flush(): Promise<void> {
    // The writes of this turn go first: messages to the thread arrive in order.
    this.sendBatch();
    await this.ask({ kind: "flush" });
  }

  /** Flushes, then stops the thread. */
  async close(): Promise<void> {
    if (this.failure) return;
    await this.flush();
    this.failure = new Error("the job writer is closed");
    await this.worker.terminate();
  }

  private ask(message: { kind: "write"; writes: { path: string; data: string }[] } | { kind: "read"; paths: readonly string[] } | { kind: "flush" }): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = (this.nextId += 1);
    return new Promise<Reply>((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, {
        resolve: (reply) => this.settled(() => resolve(reply)),
        reject: (error) => this.settled(() => reject(error)),
      });
      this.worker.postMessage({ ...message, id });
    });
  }

  private settled(then: () => void): void {
    if (this.waiting.size === 0) this.worker.unref();
    then();
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(this.failure);
    this.waiting.clear();
  }
}
