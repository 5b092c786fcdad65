import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { dirname } from "node:path";
import type { Readable } from "node:stream";
import { buildChildEnv, type EnvSpec } from "./env.js";
import { DEFAULT_TAIL_BYTES, DEFAULT_TAIL_LINES, TailBuffer } from "./tail.js";

/** Grace between SIGTERM and SIGKILL when a process tree is ended. */
export const DEFAULT_KILL_GRACE_MS = 2000;
/** Most bytes of stdout kept when a caller asks to capture it. */
export const DEFAULT_CAPTURE_BYTES = 32 * 1024 * 1024;

export interface ExecOptions {
  cwd: string;
  /** Names and values the child receives beyond the base allowlist. */
  env?: EnvSpec;
  /** Ends the whole process tree after this many milliseconds. */
  timeoutMs?: number;
  killGraceMs?: number;
  /** All output (stdout and stderr) is appended here as it arrives. */
  logPath?: string;
  tailLines?: number;
  tailBytes?: number;
  /** Keep stdout in memory (up to `captureBytes`) as `stdout`; it still counts toward the tail. */
  captureStdout?: boolean;
  captureBytes?: number;
  /** Written to the child's stdin, which is then closed. Stdin is empty otherwise. */
  input?: string | Buffer;
  /** Ends the whole process tree (SIGTERM, then SIGKILL after the grace) when aborted. */
  signal?: AbortSignal;
  /** Called with the child's pid once it started (its process group id is the same). */
  onSpawn?: (pid: number) => void;
}

export interface ExecResult {
  argv: readonly string[];
  /** Null when the child was ended by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  logPath?: string;
  /** Last lines of combined output, bounded and UTF-8 safe. */
  tail: string;
  /** Captured stdout, when asked for. */
  stdout?: Buffer;
  /** True when captured stdout went over `captureBytes` and was cut. */
  stdoutTruncated?: boolean;
  /** Why the process could not be started (for example ENOENT). */
  spawnError?: string;
}

/** True when the process ran and exited 0 within its time. */
export function succeeded(result: ExecResult): boolean {
  return result.exitCode === 0 && !result.timedOut;
}

/**
 * Runs `argv` without a shell in its own process group. Output streams to `logPath` while a
 * bounded tail stays in memory. A timeout ends the whole group: SIGTERM, then SIGKILL after
 * the grace period. When the direct child exits, whatever it left in its group is ended the
 * same way, so a background grandchild holding stdout open cannot hang the call.
 */
export function exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
  const [file, ...args] = argv;
  if (file === undefined || file === "") throw new TypeError("exec: argv must name a program");
  const started = performance.now();
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const tail = new TailBuffer(options.tailBytes ?? DEFAULT_TAIL_BYTES);
  const log = options.logPath ? openLog(options.logPath) : undefined;
  const captured: Buffer[] = [];
  let capturedBytes = 0;
  let stdoutTruncated = false;
  const captureLimit = options.captureBytes ?? DEFAULT_CAPTURE_BYTES;

  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: buildChildEnv(options.env),
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let timedOut = false;
    let exited = false;
    let exitCode: number | null = null;
    let signal: NodeJS.Signals | null = null;
    let spawnError: string | undefined;
    let openStreams = 2;
    let finished = false;
    const timers: NodeJS.Timeout[] = [];

    const killGroup = (sig: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    const endTree = (): void => {
      killGroup("SIGTERM");
      timers.push(setTimeout(() => killGroup("SIGKILL"), grace));
      // Output still held open by a process outside the group must not hang the call.
      timers.push(setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        onStreamClosed(true);
      }, grace + 500));
    };

    const finish = (): void => {
      if (finished) return;
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      const result: ExecResult = {
        argv: [...argv],
        exitCode,
        signal,
        timedOut,
        durationMs: Math.round(performance.now() - started),
        tail: tail.text(options.tailLines ?? DEFAULT_TAIL_LINES),
      };
      if (options.logPath) result.logPath = options.logPath;
      if (options.captureStdout) {
        result.stdout = Buffer.concat(captured, capturedBytes);
        result.stdoutTruncated = stdoutTruncated;
      }
      if (spawnError) result.spawnError = spawnError;
      if (log) log.end(() => resolve(result));
      else resolve(result);
    };
    const onStreamClosed = (all = false): void => {
      openStreams = all ? 0 : openStreams - 1;
      if (openStreams <= 0 && exited) finish();
    };

    const take = (stream: Readable, isStdout: boolean): void => {
      stream.on("data", (chunk: Buffer) => {
        tail.push(chunk);
        if (isStdout && options.captureStdout) {
          if (capturedBytes + chunk.length <= captureLimit) {
            captured.push(chunk);
            capturedBytes += chunk.length;
          } else stdoutTruncated = true;
        }
        if (log && !log.write(chunk)) {
          stream.pause();
          log.once("drain", () => stream.resume());
        }
      });
      stream.once("close", () => onStreamClosed());
      stream.on("error", () => undefined);
    };
    take(child.stdout, true);
    take(child.stderr, false);

    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");

    if (options.timeoutMs !== undefined) {
      timers.push(setTimeout(() => {
        if (exited) return;
        timedOut = true;
        endTree();
      }, options.timeoutMs));
    }

    if (options.signal) {
      const onAbort = (): void => {
        if (!exited) endTree();
      };
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener("abort", onAbort, { once: true });
    }
    child.once("spawn", () => {
      if (child.pid !== undefined) options.onSpawn?.(child.pid);
    });

    child.once("error", (error: NodeJS.ErrnoException) => {
      spawnError = `${error.code ?? "error"}: ${error.message}`;
      const note = Buffer.from(`exec: could not start ${file}: ${error.message}\n`);
      tail.push(note);
      log?.write(note);
      exited = true;
      onStreamClosed(true);
    });
    child.once("exit", (code, sig) => {
      exited = true;
      exitCode = code;
      signal = sig;
      // Whatever the child left running in its group goes with it.
      if (!timedOut) endTree();
      if (openStreams <= 0) finish();
    });
  });
}

/** Runs a user-written command string through `/bin/sh -lc`: the only place a shell is used. */
export function execShell(command: string, options: ExecOptions): Promise<ExecResult> {
  return exec(["/bin/sh", "-lc", command], options);
}

function openLog(path: string): WriteStream {
  mkdirSync(dirname(path), { recursive: true });
  return createWriteStream(path, { flags: "a" });
}
