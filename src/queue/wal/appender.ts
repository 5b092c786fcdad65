/**
 * The one writer of a process's log. Lines asked while a batch is being written wait for the
 * next batch; each batch is one `write`, and a line is answered once its batch's write returned:
 * the line is in the page cache, safe from kill -9 (the job-file path's guarantee, which answers
 * after its rename). The `fdatasync` follows in the background, never more than one at a time,
 * and one covers every batch written before it began (at most one per batch). A new segment's
 * folder entry is synced there too, so a line survives a power loss only once that background
 * sync is done. A line asked `synced` (a tombstone: a job's file is removed after it) is
 * answered only then.
 *
 * A failed write (ENOSPC) rejects its whole batch and gives the segment up: what it left at the
 * tail is a torn tail, and the next batch starts a new segment. A segment past `segmentBytes`
 * is sealed the same way. A failed background sync rejects the `synced` lines it covered, gives
 * up the segment when it is the open one, and is not silent: the next batch is refused with it.
 * `settled()` and `close()` wait for the background sync.
 */
import { fdatasync, writeSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { syncDir } from "../../files/index.js";

interface Pending {
  line: string;
  synced: boolean;
  resolve: (segment: number) => void;
  reject: (error: Error) => void;
}

/** What a background sync owes: a segment's file written to (and its new folder entry), closed after when sealed. */
interface Flush {
  handle: FileHandle;
  folder: string | undefined;
  close: boolean;
  /** Lines answered only once synced. */
  waiting: Array<{ segment: number; pending: Pending }>;
}

export interface AppenderEvents {
  /** A segment is about to be created: its number. */
  opening: (segment: number) => void;
  /** A segment will take no more lines. */
  sealed: (segment: number) => void;
}

export interface AppenderOptions {
  /** Test seam: how a segment's file is flushed to stable storage (default its `datasync`). */
  datasync?: (handle: FileHandle) => Promise<void>;
}

export class Appender {
  private queue: Pending[] = [];
  private handle: FileHandle | undefined;
  /** A new segment's folder, until a background sync made its entry durable. */
  private folder: string | undefined;
  private size = 0;
  private segment: number;
  private running: Promise<void> | undefined;
  private flushes: Flush[] = [];
  private syncing: Promise<void> | undefined;
  /** A background sync's failure, not yet told: the next batch is refused with it. */
  private failure: Error | undefined;
  private closed = false;

  constructor(
    private readonly pathOf: (segment: number) => string,
    private readonly segmentBytes: number,
    private readonly events: AppenderEvents,
    firstSegment = 1,
    private readonly options: AppenderOptions = {},
  ) {
    this.segment = firstSegment - 1;
  }

  /** The newest segment's number (open, being opened, or sealed): lines go there or to a later one. */
  get latest(): number {
    return this.segment;
  }

  /**
   * Appends one line (ending in a newline); resolves, with the segment it went to, once it is
   * written (kill -9 safe), or with `synced` once it is on stable storage.
   */
  append(line: string, synced = false): Promise<number> {
    if (this.closed) return Promise.reject(new Error("the write-ahead log is closed"));
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ line, synced, resolve, reject });
      // Lines asked in this turn of the event loop, and while a batch is on its way, share a batch.
      this.running ??= new Promise<void>((started) => setImmediate(started)).then(() => this.drain());
    });
  }

  /** Resolves when no batch is waiting, being written or being synced. */
  async settled(): Promise<void> {
    while (this.running || this.syncing) await (this.running ?? this.syncing);
  }

  /**
   * Waits for the lines asked so far and their sync, then closes the segment. A sync failure
   * not yet told is dropped: the lines it covered are answered job records, which the log's
   * close writes as job files anyway.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
    this.seal();
    await this.settled();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      const failure = this.failure;
      this.failure = undefined;
      if (failure) {
        // Nothing of this batch is written: the open segment (if any) was synced since, and stays.
        for (const pending of batch) pending.reject(failure);
        continue;
      }
      try {
        const { segment, flush } = await this.write(batch.map((pending) => pending.line).join(""));
        for (const pending of batch) {
          if (pending.synced) flush.waiting.push({ segment, pending });
          else pending.resolve(segment);
        }
      } catch (error) {
        this.seal();
        for (const pending of batch) pending.reject(error as Error);
      }
    }
    this.running = undefined;
  }

  /** Writes one batch: its segment, and what it owes the background sync. */
  private async write(text: string): Promise<{ segment: number; flush: Flush }> {
    if (!this.handle) {
      this.segment += 1;
      this.events.opening(this.segment);
      const path = this.pathOf(this.segment);
      this.handle = await open(path, "wx", 0o644);
      this.size = 0;
      this.folder = dirname(path);
    }
    const handle = this.handle;
    const segment = this.segment;
    const data = Buffer.from(text);
    // At the file's position (the end: only this appender writes it), every byte, however many writes that takes.
    writeAll(handle.fd, data);
    this.size += data.length;
    const flush: Flush = { handle, folder: this.folder, close: false, waiting: [] };
    this.flushes.push(flush);
    this.folder = undefined;
    if (this.size >= this.segmentBytes) this.seal();
    this.requestSync();
    return { segment, flush };
  }

  /** The open segment takes no more lines; it is closed after its background sync. */
  private seal(): void {
    const handle = this.handle;
    if (!handle) return;
    this.handle = undefined;
    this.events.sealed(this.segment);
    this.flushes.push({ handle, folder: this.folder, close: true, waiting: [] });
    this.folder = undefined;
    this.requestSync();
  }

  private requestSync(): void {
    this.syncing ??= this.sync();
  }

  /** The background sync: one at a time, each covering every write made before it began. */
  private async sync(): Promise<void> {
    while (this.flushes.length > 0) {
      const flushes = this.flushes.splice(0);
      const handles = new Set(flushes.map((flush) => flush.handle));
      let failure: Error | undefined;
      try {
        for (const flush of flushes) if (flush.folder) await syncDir(flush.folder);
        for (const handle of handles) await (this.options.datasync ? this.options.datasync(handle) : datasync(handle.fd));
      } catch (error) {
        failure = error as Error;
        this.failure = failure;
        // The open segment's fate is unknown: the next lines go to a new one.
        if (this.handle && handles.has(this.handle)) this.seal();
      }
      for (const flush of flushes) {
        if (flush.close) await flush.handle.close().catch(() => undefined);
        for (const { segment, pending } of flush.waiting) {
          if (failure) pending.reject(failure);
          else pending.resolve(segment);
        }
      }
    }
    this.syncing = undefined;
  }
}

/*
 * A batch's write is made on the event loop: a write into the page cache (a batch is one
 * webhook's record at a few hundred a second, 2 KiB) costs less than handing it to the thread
 * pool and being called back, which took a wake-up of a pool thread and one of the loop per
 * batch (such round trips were most of the App's extra CPU per delivery over bare Probot:
 * docs/benchmarks.md, `## webhook-latency`). Beside a running fdatasync the write holds the
 * loop a p99 of about 30 µs, where the pool's callback came after about 110 µs
 * (`npm run bench -- wal-write`; docs/benchmarks.md, `## wal-write`). The sync stays in the
 * background, through node's callback call on the segment's descriptor: the FileHandle methods
 * wrap each call in promise machinery that allocated more per enqueue than the record itself
 * (`npm run bench -- webhook-latency --alloc`). The FileHandle still owns the descriptor.
 */

/** Writes every byte of `data` at the descriptor's position. */
function writeAll(fd: number, data: Buffer): void {
  for (let offset = 0; offset < data.length;) offset += writeSync(fd, data, offset, data.length - offset, null);
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}
