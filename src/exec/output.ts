/**
 * Where a child's output goes. With a log file and no captured stdout, the child writes
 * straight into the file (the harness touches none of the bytes, so its memory does not move
 * however much is printed) and the tail is read back from the end of what it wrote. Otherwise
 * output comes through pipes: into a bounded tail, the optional capture, and the log.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { ChildProcess, StdioOptions } from "node:child_process";
import type { Readable } from "node:stream";
import { CappedLog, ExecLogError, LogSink } from "./log.js";
import { TailBuffer, tailText } from "./tail.js";

/** What is left of a child's output once it is done. */
export interface OutputSummary {
  tail: string;
  logError?: string;
  /** The captured stdout (its first `captureBytes` bytes), when it was asked for. */
  captured?: { stdout: Buffer; truncated: boolean };
}

export interface OutputOptions {
  logPath?: string | undefined;
  /** Cap of the log's size (head and tail kept); see {@link CappedLog}. */
  logCapBytes?: number | undefined;
  tailBytes: number;
  captureStdout: boolean;
  captureBytes: number;
}

/** One child's output handling, from spawn to summary. */
export interface ChildOutput {
  /** Stdout and stderr for `spawn` (stdin is always a pipe). */
  readonly stdio: StdioOptions;
  /** Starts reading; resolves once the child's output pipes are closed (at once without pipes). */
  attach(child: ChildProcess): Promise<void>;
  /** Stops reading pipes that a process outside the child's group still holds open (closed ones stay as they are). */
  abandon(child: ChildProcess): void;
  /** Records a line of the harness's own (for example why the program could not start). */
  note(text: string): void;
  /** Closes the log and renders the tail. */
  finish(tailLines: number): Promise<OutputSummary>;
}

/** Chooses direct file output when possible, pipes otherwise; throws {@link ExecLogError}. */
export function openOutput(options: OutputOptions): ChildOutput {
  if (options.logPath !== undefined && !options.captureStdout && options.logCapBytes === undefined) {
    const direct = DirectFileOutput.open(options.logPath, options.tailBytes);
    if (direct) return direct;
  }
  return new PipedOutput(options);
}

class DirectFileOutput implements ChildOutput {
  readonly stdio: StdioOptions;

  private constructor(
    private readonly fd: number,
    private readonly start: number,
    private readonly tailBytes: number,
  ) {
    this.stdio = ["pipe", fd, fd];
  }

  /** Opens `path` for appending; undefined when it is not a regular file (/dev/null, a FIFO). */
  static open(path: string, tailBytes: number): DirectFileOutput | undefined {
    let fd: number;
    try {
      mkdirSync(dirname(path), { recursive: true });
      fd = openSync(path, "a+");
    } catch (error) {
      throw new ExecLogError(path, (error as Error).message);
    }
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      closeSync(fd);
      return undefined;
    }
    return new DirectFileOutput(fd, stat.size, tailBytes);
  }

  attach(): Promise<void> {
    return Promise.resolve();
  }

  abandon(): void {}

  note(text: string): void {
    writeSync(this.fd, text);
  }

  /** Called once: the file descriptor is closed here. */
  async finish(tailLines: number): Promise<OutputSummary> {
    try {
      const end = fstatSync(this.fd).size;
      const from = Math.max(this.start, end - this.tailBytes);
      // Stryker disable next-line ArithmeticOperator: a larger buffer is cut to the bytes read below.
      const bytes = Buffer.alloc(Math.max(0, end - from));
      // One read: a regular file gives all the bytes asked for that it has.
      const read = readSync(this.fd, bytes, 0, bytes.length, from);
      return { tail: tailText(bytes.subarray(0, read), tailLines, this.tailBytes) };
    } finally {
      closeSync(this.fd);
    }
  }
}

class PipedOutput implements ChildOutput {
  // Stryker disable next-line StringLiteral: node takes an empty stdio for its default, which is "pipe".
  readonly stdio: StdioOptions = "pipe";
  private readonly tail: TailBuffer;
  private readonly log: LogSink | CappedLog | undefined;
  private readonly captured: Buffer[] = [];
  private capturedBytes = 0;
  private truncated = false;

  constructor(private readonly options: OutputOptions) {
    this.tail = new TailBuffer(options.tailBytes);
    const sink = options.logPath !== undefined ? LogSink.open(options.logPath) : undefined;
    this.log = sink && options.logCapBytes !== undefined ? new CappedLog(sink, options.logCapBytes) : sink;
  }

  attach(child: ChildProcess): Promise<void> {
    const { stdout, stderr } = child;
    // A spawn that failed for want of descriptors (EMFILE, ENFILE) leaves both undefined, not null:
    // node gives up before it creates the pipes.
    if (stdout == null || stderr == null) return Promise.resolve();
    return Promise.all([this.read(stdout, true), this.read(stderr, false)]).then(() => undefined);
  }

  private read(stream: Readable, isStdout: boolean): Promise<void> {
    stream.on("data", (chunk: Buffer) => {
      this.tail.push(chunk);
      if (isStdout && this.options.captureStdout) this.capture(chunk);
      // Backpressure: a slow log slows the reader, it never piles output up in memory.
      // Stryker disable next-line BlockStatement: without the pause the same bytes arrive, only held in memory; bench/exec-memory measures that.
      if (this.log && !this.log.write(chunk)) {
        stream.pause();
        this.log.onDrain(() => stream.resume());
      }
    });
    // Stryker disable next-line StringLiteral: a pipe that a child's exit or abandon() ends emits no error; the listener only keeps an unforeseen read error from crashing the App.
    stream.on("error", () => undefined);
    // Stryker disable next-line ArrowFunction,StringLiteral: a promise that never settles is cut by exec's wait for the pipes (a second); only that latency tells, and latency is bench's.
    return new Promise((resolve) => stream.once("close", () => resolve()));
  }

  /** Keeps the first `captureBytes` bytes of stdout, and whether more came. */
  private capture(chunk: Buffer): void {
    // Stryker disable next-line ConditionalExpression: without it every chunk past the cap adds an empty buffer: the same bytes, only more garbage.
    if (this.truncated) return;
    const kept = chunk.subarray(0, this.options.captureBytes - this.capturedBytes);
    this.truncated = kept.length < chunk.length;
    this.captured.push(kept);
    this.capturedBytes += kept.length;
  }

  abandon(child: ChildProcess): void {
    // Stryker disable next-line OptionalChaining: with stdio "pipe" both streams exist; the chaining only narrows the types.
    child.stdout?.destroy();
    // Stryker disable next-line OptionalChaining: as above.
    child.stderr?.destroy();
  }

  note(text: string): void {
    const bytes = Buffer.from(text);
    this.tail.push(bytes);
    this.log?.write(bytes);
  }

  async finish(tailLines: number): Promise<OutputSummary> {
    const summary: OutputSummary = { tail: this.tail.text(tailLines) };
    // Undefined when the log took every byte, or there is none: exec copies only a defined error.
    summary.logError = this.log ? await this.log.close() : undefined;
    if (this.options.captureStdout) summary.captured = { stdout: Buffer.concat(this.captured, this.capturedBytes), truncated: this.truncated };
    return summary;
  }
}
