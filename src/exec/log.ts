/**
 * The log file a child's output streams into. It is opened synchronously so that a path that
 * cannot be written is reported before anything runs; later write errors are kept, not thrown.
 */
import { createWriteStream, mkdirSync, openSync, type WriteStream } from "node:fs";
import { dirname } from "node:path";
import { TailBuffer } from "./tail.js";
import type { FailureClass } from "../pipeline/index.js";

/** A log file could not be opened; nothing was started. */
export class ExecLogError extends Error {
  readonly failureClass = "internal-error" satisfies FailureClass;
  constructor(readonly logPath: string, readonly reason: string) {
    super(`cannot open log file ${logPath}: ${reason}`);
    this.name = "ExecLogError";
  }
}

export class LogSink {
  private error: string | undefined;

  private constructor(private readonly stream: WriteStream) {
    stream.on("error", (error: Error) => {
      this.error ??= error.message;
    });
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

  /** Appends a chunk; false when the caller should wait for {@link onDrain}. */
  write(chunk: Buffer): boolean {
    if (this.error !== undefined || this.stream.destroyed) return true;
    return this.stream.write(chunk);
  }

  /** Calls `resume` once buffered data was flushed (or the log failed, so nobody waits forever). */
  onDrain(resume: () => void): void {
    if (this.error !== undefined) return resume();
    const done = (): void => {
      this.stream.off("drain", done);
      this.stream.off("error", done);
      resume();
    };
    this.stream.once("drain", done);
    this.stream.once("error", done);
  }

  /** Flushes and closes the file; resolves with the write error, if any occurred. */
  close(): Promise<string | undefined> {
    return new Promise((resolve) => {
      if (this.stream.destroyed) return resolve(this.error);
      this.stream.end(() => resolve(this.error));
      this.stream.once("error", () => resolve(this.error));
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

  constructor(private readonly sink: LogSink, capBytes: number) {
    this.headBytes = Math.floor(capBytes / 2);
    this.tail = new TailBuffer(capBytes - this.headBytes);
  }

  write(chunk: Buffer): boolean {
    this.total += chunk.length;
    const room = this.headBytes - this.written;
    if (room >= chunk.length) {
      this.written += chunk.length;
      return this.sink.write(chunk);
    }
    let ok = true;
    if (room > 0) {
      ok = this.sink.write(chunk.subarray(0, room));
      this.written += room;
    }
    this.tail.push(room > 0 ? chunk.subarray(room) : chunk);
    return ok;
  }

  onDrain(resume: () => void): void {
    this.sink.onDrain(resume);
  }

  async close(): Promise<string | undefined> {
    const kept = this.tail.bytes();
    const cut = this.total - this.written - kept.length;
    if (cut > 0) this.sink.write(Buffer.from(`\n[harness: log cut: ${cut} of ${this.total} bytes left out here; the first ${this.written} and the last ${kept.length} are kept]\n`));
    if (kept.length > 0) this.sink.write(kept);
    return this.sink.close();
  }
}
