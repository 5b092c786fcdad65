/**
 * The one writer of a process's log: group commit. Lines asked while a batch is being written
 * wait for the next batch; each batch is one write and one `fdatasync`, and every line's
 * promise resolves only once its batch is on stable storage. A failed batch (ENOSPC) is
 * rejected whole and the segment is given up: what it left at the tail is a torn tail, and
 * the next batch starts a new segment. A segment past `segmentBytes` is sealed the same way.
 */
import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { syncDir } from "../../files/index.js";

interface Pending { line: string; resolve: (segment: number) => void; reject: (error: Error) => void }

export interface AppenderEvents {
  /** A segment is about to be created: its number. */
  opening: (segment: number) => void;
  /** A segment will take no more lines. */
  sealed: (segment: number) => void;
}

export class Appender {
  private queue: Pending[] = [];
  private handle: FileHandle | undefined;
  private size = 0;
  private segment: number;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly pathOf: (segment: number) => string,
    private readonly segmentBytes: number,
    private readonly events: AppenderEvents,
    firstSegment = 1,
  ) {
    this.segment = firstSegment - 1;
  }

  /** The segment lines go to now, or undefined when none is open. */
  get current(): number | undefined {
    return this.handle ? this.segment : undefined;
  }

  /** The newest segment's number (open, being opened, or sealed): lines go there or to a later one. */
  get latest(): number {
    return this.segment;
  }

  /** Appends one line (ending in a newline); resolves, with the segment it went to, once it is durable. */
  append(line: string): Promise<number> {
    if (this.closed) return Promise.reject(new Error("the write-ahead log is closed"));
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ line, resolve, reject });
      // Lines asked in this turn of the event loop, and while a batch is on its way, share a batch.
      this.running ??= new Promise<void>((started) => setImmediate(started)).then(() => this.drain());
    });
  }

  /** Resolves when no batch is waiting or being written. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Waits for the lines asked so far, then closes the segment. */
  async close(): Promise<void> {
    await this.settled();
    this.closed = true;
    await this.seal();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      try {
        const segment = await this.write(batch.map((pending) => pending.line).join(""));
        for (const pending of batch) pending.resolve(segment);
      } catch (error) {
        await this.seal().catch(() => undefined);
        for (const pending of batch) pending.reject(error as Error);
      }
    }
    this.running = undefined;
  }

  private async write(text: string): Promise<number> {
    if (!this.handle) {
      this.segment += 1;
      this.events.opening(this.segment);
      const path = this.pathOf(this.segment);
      this.handle = await open(path, "wx", 0o644);
      this.size = 0;
      // The new name itself must survive a power loss before any line in it is answered.
      await syncDir(dirname(path));
    }
    const segment = this.segment;
    const data = Buffer.from(text, "utf8");
    let written = 0;
    while (written < data.length) written += (await this.handle.write(data, written, data.length - written)).bytesWritten;
    await this.handle.datasync();
    this.size += data.length;
    if (this.size >= this.segmentBytes) await this.seal();
    return segment;
  }

  private async seal(): Promise<void> {
    const handle = this.handle;
    if (!handle) return;
    this.handle = undefined;
    this.events.sealed(this.segment);
    await handle.close();
  }
}
