/**
 * The log file a child's output streams into. It is opened synchronously so that a path that
 * cannot be written is reported before anything runs; later write errors are kept, not thrown.
 */
import { createWriteStream, mkdirSync, openSync, type WriteStream } from "node:fs";
import { dirname } from "node:path";

/** A log file could not be opened; nothing was started. */
export class ExecLogError extends Error {
  readonly failureClass = "internal-error";
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
