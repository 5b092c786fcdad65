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

/** The thread's code: a module of its own, plain JavaScript that runs as it is everywhere (see its comment). */
const THREAD = new URL("./job-file-thread.js", import.meta.url);

/** One file as read by the worker: its text, or why it could not be read. */
export type ReadResult = { text: string } | { code: string; message: string };

interface WriteError {
  message: string;
  code?: string;
}

/** The thread's answers, by the kind of message asked (see job-file-thread.js). */
interface WriteReply {
  id: number;
  /** Per write of a batch, in order: null when it was written. */ errors: (WriteError | null)[];
}
interface ReadReply {
  id: number;
  files: ReadResult[];
}
type Reply = { id: number } | WriteReply | ReadReply;

interface Write {
  path: string;
  data: string;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** A worker thread that writes job files atomically and reads them in bulk; see the file's comment for when a write is durable. */
export class JobFileWorker {
  private readonly waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  /** Writes asked in this turn of the event loop, sent together at its end. */
  private batch: Write[] = [];
  /** The end of this turn, when the batch goes, once a write asked for it. */
  private sending: NodeJS.Immediate | undefined;
  private nextId = 0;
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    // A reply nobody waits for (its asker was already told the thread failed) is let go.
    worker.on("message", (reply: Reply) => this.waiting.get(reply.id)?.resolve(reply));
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => this.fail(new Error(`the job writer thread exited (code ${code})`)));
    // Idle, it must not keep the App alive; while an answer is awaited, it does (see ask).
    worker.unref();
  }

  /**
   * Starts the thread. `thread` is the module it runs: job-file-thread.js; tests give a stand-in
   * that fails on request, the only way to see the thread exit or throw.
   */
  static start(options: { thread?: URL } = {}): JobFileWorker {
    return new JobFileWorker(new Worker(options.thread ?? THREAD));
  }

  /**
   * Writes `data` to `path` atomically; resolves when it is visible and safe from this process
   * dying. Writes asked in one turn of the event loop go to the thread in one message: under a
   * burst of webhooks the hand-off between threads is paid once per turn, not once per job.
   */
  write(path: string, data: string): Promise<void> {
    // Once the thread failed or was closed, the batch's message is refused (see ask): so is the write.
    return new Promise<void>((resolve, reject) => {
      this.batch.push({ path, data, resolve, reject });
      this.sending ??= setImmediate(() => this.sendBatch());
    });
  }

  private sendBatch(): void {
    this.sending = undefined;
    const writes = this.batch.splice(0);
    if (writes.length === 0) return;
    this.ask<WriteReply>({ kind: "write", writes: writes.map(({ path, data }) => ({ path, data })) }).then(
      (reply) =>
        writes.forEach((write, index) => {
          const failed = reply.errors[index];
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
    return (await this.ask<ReadReply>({ kind: "read", paths })).files;
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

  /** Sends one message; the thread keeps the process up until its answer (or its failure) came. */
  private ask<T extends Reply>(
    message: { kind: "write"; writes: { path: string; data: string }[] } | { kind: "read"; paths: readonly string[] } | { kind: "flush" },
  ): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    // Stryker disable next-line AssignmentOperator: ids only need to differ from each other; counting down does too
    const id = (this.nextId += 1);
    this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (reply: Reply) => void, reject });
      this.worker.postMessage({ ...message, id });
    }).finally(() => {
      this.waiting.delete(id);
      if (this.waiting.size === 0) this.worker.unref();
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(this.failure);
  }
}
