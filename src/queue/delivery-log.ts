import { writeSync } from "node:fs";
import { open, readFile, type FileHandle } from "node:fs/promises";
import { writeFileAtomic } from "../files/index.js";

/** How many delivery ids are remembered; GitHub redelivers within hours, not thousands of events. */
export const DEFAULT_DELIVERY_MEMORY = 5000;

/** How long the log's writer gathers ids before it appends them. */
export const DELIVERY_LOG_BATCH_MS = 20;

/**
 * The `X-GitHub-Delivery` ids seen recently, persisted as an append-only file of one id per
 * line so that a redelivery after a restart is still recognised. Bounded: when the file holds
 * twice the bound it is rewritten atomically with the newest ids only.
 */
export class DeliveryLog {
  /** The remembered ids, oldest first (a Set keeps insertion order: dropping the oldest is O(1)). */
  private readonly seen = new Set<string>();
  private lines = 0;
  /** Lines recorded but not yet handed to the kernel; one writer appends them in batches. */
  private pending: string[] = [];
  private writer: Promise<void> | undefined;
  /** Ends the writer's batching window at once (on close). */
  private endWindow: (() => void) | undefined;
  private closing = false;

  private constructor(
    private readonly path: string,
    private readonly bound: number,
    private handle: FileHandle,
  ) {}

  /** Opens (or creates) the log and loads the newest `bound` ids; a torn last line is ignored. */
  static async open(path: string, bound = DEFAULT_DELIVERY_MEMORY): Promise<DeliveryLog> {
    // Stryker disable next-line StringLiteral: replaced by the file's text, or, when there is none, any text without a line break reads as one torn line: no ids either way
    let text = "";
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const complete = text.endsWith("\n") ? text : text.slice(0, text.lastIndexOf("\n") + 1);
    const ids = complete.split("\n").filter((line) => line !== "");
    const log = new DeliveryLog(path, bound, await open(path, "a"));
    // Stryker disable next-line MethodExpression: remember() keeps the newest `bound` ids anyway; the slice only spares it the older ones
    for (const id of ids.slice(-bound)) log.remember(id);
    log.lines = ids.length;
    if (complete.length !== text.length) await log.compact();
    return log;
  }

  /** Remembers an id without writing it (one known from a job file). */
  note(id: string): void {
    // Stryker disable next-line ConditionalExpression: adding a member to a Set again leaves it, and its place in the order, as it was
    if (!this.seen.has(id)) this.remember(id);
  }

  /** True when this delivery id was recorded. */
  has(id: string): boolean {
    return this.seen.has(id);
  }

  /**
   * Records a delivery id. Not fsynced: a job's own file carries its delivery id durably, so a
   * tail lost in a crash only forgets deliveries whose story is already finished or refused.
   */
  async add(id: string): Promise<void> {
    await this.record(id);
  }

  /**
   * Remembers `id` now (a redelivery arriving next is recognised at once) and hands it to the
   * writer; the promise tells when it is written. The webhook's enqueue does not wait for it:
   * the job file already holds the id durably, and the append can wait behind a compaction.
   */
  record(id: string): Promise<void> {
    if (/[\r\n]/.test(id)) throw new TypeError("delivery id must be one line");
    if (this.seen.has(id)) return Promise.resolve();
    this.remember(id);
    this.pending.push(`${id}\n`);
    return this.flush();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.endWindow?.();
    await this.flush().catch(() => undefined);
    await this.handle.close();
  }

  /**
   * Appends the pending lines. One writer at a time (group commit): ids
   * added while a batch is being written go out together in the next one, so a burst of
   * webhooks costs a few appends, and a compaction never races an append on the old file.
   * Resolves once every line pending at the call is written.
   */
  private flush(): Promise<void> {
    this.writer ??= (async () => {
      try {
        // A short window gathers the ids of a burst into one append (one write
        // instead of one per webhook); closing does not wait for it.
        // The timer keeps the process up until the ids are appended, as the write itself did.
        if (!this.closing) {
          await new Promise<void>((end) => {
            const timer = setTimeout(end, DELIVERY_LOG_BATCH_MS);
            // Left in place once the window is over: ending a window that ended already does nothing.
            this.endWindow = () => (clearTimeout(timer), end());
          });
        }
        while (this.pending.length > 0) {
          const batch = this.pending.splice(0);
          // On the event loop: a few ids into the page cache cost less than a thread-pool round trip (docs/benchmarks.md, `## webhook-latency`).
          appendAll(this.handle.fd, Buffer.from(batch.join("")));
          this.lines += batch.length;
          if (this.lines >= this.bound * 2) await this.compact();
        }
      } finally {
        this.writer = undefined;
      }
    })();
    return this.writer;
  }

  private remember(id: string): void {
    this.seen.add(id);
    while (this.seen.size > this.bound) {
      const oldest = this.seen.values().next();
      // Stryker disable next-line ConditionalExpression: the set holds more than `bound` (≥ 0) ids here, so it has an oldest one
      if (oldest.done) break;
      this.seen.delete(oldest.value);
    }
  }

  private async compact(): Promise<void> {
    await this.handle.close();
    await writeFileAtomic(this.path, [...this.seen].map((id) => `${id}\n`).join(""));
    this.handle = await open(this.path, "a");
    this.lines = this.seen.size;
  }
}

/** Writes every byte of `data` to a descriptor opened for appending. */
function appendAll(fd: number, data: Buffer): void {
  for (let offset = 0; offset < data.length;) offset += writeSync(fd, data, offset, data.length - offset);
}
