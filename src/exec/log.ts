/**
 * The log file a child's output streams into. It is opened synchronously so that a path that
 * cannot be written is reported before anything runs; later write errors are kept, not thrown.
 */
import { createWriteStream, mkdirSync, openSync, type WriteStream } from "node:fs";
import { dirname } from "node:path";
import { TailBuffer } from "./tail.js";
import type { FailureClass } from "../failure/index.js";

/** A log file could not be opened; nothing was started. */
export class ExecLogError extends Error {
  readonly failureClass = "internal-error" satisfies FailureClass;
  constructor(
    readonly logPath: string,
    readonly reason: string,
  ) {
    super(`cannot open log file ${logPath}: ${reason}`);
    this.name = "ExecLogError";
  }
}

export class LogSink {
  private error: string | undefined;
  /** Readers paused on a full buffer, resumed by the next drain or by the log's failure. */
  private readonly waiting: Array<() => void> = [];

  private constructor(private readonly stream: WriteStream) {
    stream.on("error", (error: Error) => {
      this.error ??= error.message;
      this.wake();
    });
    stream.on("drain", () => this.wake());
  }

  /** Opens `path` for appending, creating its folder; throws {@link ExecLogError}. */
  static open(path: string): LogSink {
    try {
      mkdirSync(dirname(path), { recursive: true });
      const fd = openSync(path, "a");
      return new LogSink(createWriteStream(path, { fd }));
    } catch (error) {
      throw new ExecLogError(path, (error as Error).message);
    }
  }

  /**
   * Appends a chunk; false when the caller should wait for {@link onDrain}. A failed log takes
   * nothing more (a stream is destroyed before it emits its error).
   */
  write(chunk: Buffer): boolean {
    if (this.stream.destroyed) return true;
    return this.stream.write(chunk);
  }

  /** Calls `resume` once buffered data was flushed, or the log failed, so nobody waits forever. */
  onDrain(resume: () => void): void {
    this.waiting.push(resume);
  }

  private wake(): void {
    for (const resume of this.waiting.splice(0)) resume();
  }

  /**
   * Flushes and closes the file; resolves with the write error, if any occurred. It waits for
   * "close", which comes after "error" (the callback of `end` may come before it).
   */
  close(): Promise<string | undefined> {
    return new Promise((resolve) => {
      if (this.stream.closed) return resolve(this.error);
      this.stream.once("close", () => resolve(this.error));
      this.stream.end();
    });
  }
}

/**
 * A log that keeps at most `capBytes` of a run's output: the first half as it arrives, the
 * last half in a ring that is written after a line saying how many bytes were cut. A suite
 * printing gigabytes leaves a log of the cap's size, with its beginning and its end.
 */
export class CappedLog {
  private readonly headBytes: number;
  private written = 0;
  private total = 0;
  private readonly tail: TailBuffer;

  constructor(
    private readonly sink: LogSink,
    capBytes: number,
  ) {
    this.headBytes = Math.floor(capBytes / 2);
    this.tail = new TailBuffer(capBytes - this.headBytes);
  }

  write(chunk: Buffer): boolean {
    this.total += chunk.length;
    const head = chunk.subarray(0, this.headBytes - this.written);
    this.written += head.length;
    this.tail.push(chunk.subarray(head.length));
    // Stryker disable next-line ConditionalExpression: an empty write leaves the file as it is; the check spares a system call per chunk once the head is full.
    return head.length === 0 ? true : this.sink.write(head);
  }

  onDrain(resume: () => void): void {
    this.sink.onDrain(resume);
  }

  async close(): Promise<string | undefined> {
    const kept = this.tail.bytes();
    const cut = this.total - this.written - kept.length;
    if (cut > 0)
      this.sink.write(
        Buffer.from(`\n[harness: log cut: ${cut} of ${this.total} bytes left out here; the first ${this.written} and the last ${kept.length} are kept]\n`),
      );
    this.sink.write(kept);
    return this.sink.close();
  }
}
