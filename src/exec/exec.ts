import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { buildChildEnv, type EnvSpec } from "./env.js";
import { terminateGroup } from "./group.js";
import { currentStepScope, effectiveSignal } from "./scope.js";
import { openOutput, type OutputSummary } from "./output.js";
import { DEFAULT_TAIL_BYTES, DEFAULT_TAIL_LINES } from "./tail.js";

/** Grace between SIGTERM and SIGKILL when a process tree is ended. */
export const DEFAULT_KILL_GRACE_MS = 2000;
/** Most bytes of stdout kept when a caller asks to capture it. */
export const DEFAULT_CAPTURE_BYTES = 32 * 1024 * 1024;
/**
 * How long output pipes may stay open once the child's whole group is gone. Only a process
 * that left the group (setsid) can still hold them; the call does not wait for it longer.
 */
const STREAM_DRAIN_MS = 1000;

export interface ExecOptions {
  cwd: string;
  /** Names and values the child receives beyond the base allowlist. */
  env?: EnvSpec;
  /** Ends the whole process tree after this many milliseconds. */
  timeoutMs?: number;
  killGraceMs?: number;
  /** All output (stdout and stderr) is appended here as it arrives. */
  logPath?: string;
  /**
   * Most bytes the log keeps of this run's output: its first and last halves, with a line
   * saying how much was cut between them. Output then passes through the harness's pipes.
   */
  logCapBytes?: number;
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
  /**
   * The child does not keep the App's event loop alive (a helper the App keeps while it wants
   * it, such as a spare network namespace). Give it a `logPath` and no cap: pipes would hold the loop.
   */
  background?: boolean;
}

export interface ExecResult {
  argv: readonly string[];
  /** Null when the child was ended by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Present (true) when the caller's AbortSignal ended the tree. */
  aborted?: boolean;
  durationMs: number;
  logPath?: string;
  /** Why writing the log failed part-way (for example ENOSPC); the run itself went on. */
  logError?: string;
  /** Last lines of combined output, bounded and UTF-8 safe. */
  tail: string;
  /** Captured stdout, when asked for. */
  stdout?: Buffer;
  /** True when captured stdout went over `captureBytes` and was cut. */
  stdoutTruncated?: boolean;
  /** Why the process could not be started (for example ENOENT). */
  spawnError?: string;
}

/**
 * True when the process ran and exited 0 within its time: the one definition of a passing run,
 * used for a suite gate, a baseline and the suite of a clean clone alike.
 */
export function succeeded(result: { exitCode?: number | null; timedOut?: boolean; aborted?: boolean }): boolean {
  // A step its caller stopped never passed, even when it won the race and exited 0 first.
  return result.exitCode === 0 && result.timedOut !== true && result.aborted !== true;
}

/**
 * Runs `argv` without a shell in its own process group. Output streams to `logPath` (written
 * by the child directly when stdout is not captured) while only a bounded tail is kept. A timeout or an abort ends the whole group: SIGTERM, then
 * SIGKILL after the grace period. When the direct child exits, whatever it left in its group
 * is ended the same way, and the call resolves only once none of it is running, so a
 * background grandchild can neither hang the call nor outlive it.
 *
 * Rejects (with {@link ExecLogError}) only when the log file cannot be opened; every other
 * failure, including a program that cannot start, is described by the result.
 */
export async function exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
  const [file, ...args] = argv;
  if (file === undefined || file === "") throw new TypeError("exec: argv must name a program");
  const started = performance.now();
  // The step this call runs in (the runner's job): its stop signal ends this process too, and
  // the process is recorded in its ledger while it runs.
  const scope = currentStepScope();
  const stop = effectiveSignal(options.signal, scope);
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const output = openOutput({
    logPath: options.logPath,
    logCapBytes: options.logCapBytes,
    tailBytes: options.tailBytes ?? DEFAULT_TAIL_BYTES,
    captureStdout: options.captureStdout ?? false,
    captureBytes: options.captureBytes ?? DEFAULT_CAPTURE_BYTES,
  });

  // A step stopped before its call starts nothing: a process started only to be ended could
  // still finish first, and its exit status would then be read as the step's.
  if (stop?.aborted) {
    const run = { exitCode: null, signal: null, timedOut: false, aborted: true, durationMs: Math.round(performance.now() - started) };
    return resultOf(argv, options, run, await output.finish(0));
  }

  let child: ChildProcess;
  try {
    // A scope's niceness holds from the program's first instruction: `nice` sets it and execs the
    // program (the same pid), so nothing the program starts escapes it. (Setting it once the child
    // had started raced the child's own first forks: bubblewrap's were seen at the App's priority.)
    const [program, programArgs] = scope?.niceness !== undefined ? ["nice", ["-n", String(scope.niceness), "--", file, ...args]] : [file, args];
    child = spawn(program, programArgs, {
      cwd: options.cwd,
      env: buildChildEnv(options.env),
      detached: true, // its own session and process group, so the whole tree can be signalled
      stdio: output.stdio,
    });
  } catch (error) {
    await output.finish(0); // an invalid argument (for example a NUL byte): nothing started
    throw error;
  }

  let timedOut = false;
  let aborted = false;
  let exitCode: number | null = null;
  let signal: NodeJS.Signals | null = null;
  let spawnError: string | undefined;

  let ending: Promise<void> | undefined;
  const endTree = (): Promise<void> => {
    // Stryker disable next-line ConditionalExpression: a child that never started has no group, and terminateGroup finds none for it either (node refuses to signal NaN).
    ending ??= child.pid === undefined ? Promise.resolve() : terminateGroup(child.pid, grace);
    return ending;
  };

  // The listeners go on before anything else touches the child: node reports a start failure
  // (EMFILE, ENOENT, EAGAIN) on the next tick as an "error" event, and one emitted with no
  // listener is an unhandled event that ends the App.
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code, sig) => {
      exitCode = code;
      signal = sig;
      resolve();
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      // Only a start failure leaves no pid; any other error is followed by the exit event.
      // Stryker disable next-line ConditionalExpression: node emits error on a started child only when kill() or send() fails, and exec calls neither.
      if (child.pid !== undefined) return;
      spawnError = describeSpawnError(error, file, options.cwd);
      output.note(`exec: could not start ${file}: ${spawnError}\n`);
      output.abandon(child);
      resolve();
    });
  });
  child.once("spawn", () => {
    // Stryker disable next-line ConditionalExpression: node emits spawn only once the child has a pid; the check only narrows the type.
    if (child.pid === undefined) return;
    scope?.ledger?.started(child.pid, file);
    options.onSpawn?.(child.pid);
  });

  // A child that could not start for want of descriptors has no stdio streams at all (node
  // gives up before creating them), so every use below must do without them.
  const outputClosed = output.attach(child);
  if (options.background) child.unref();
  child.stdin?.on("error", () => undefined); // a child that never reads stdin closes it early
  child.stdin?.end(options.input ?? "");

  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          void endTree();
        }, options.timeoutMs);
  const onAbort = (): void => {
    aborted = true;
    void endTree();
  };
  if (stop?.aborted) onAbort();
  else stop?.addEventListener("abort", onAbort); // removed below, once the call is done

  try {
    await exited;
    // The timeout is the child's own: it no longer counts while its leftovers are ended.
    clearTimeout(timer);
    // Whatever the child left running in its group goes with it, before the call returns.
    await endTree();
    // Pipes still open now are held by a process that left the group: stop reading them.
    await settlesWithin(outputClosed, STREAM_DRAIN_MS);
    output.abandon(child);
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener("abort", onAbort);
    // Stryker disable next-line ConditionalExpression: a child that never started was never recorded; forgetting pid undefined removes nothing.
    if (child.pid !== undefined) scope?.ledger?.ended(child.pid);
  }
  const summary = await output.finish(options.tailLines ?? DEFAULT_TAIL_LINES);
  const run = { exitCode, signal, timedOut, aborted, durationMs: Math.round(performance.now() - started) };
  return resultOf(argv, options, run, summary, spawnError);
}

/** The call's result: how the process ended, and what its output left. */
function resultOf(
  argv: readonly string[],
  options: ExecOptions,
  run: Pick<ExecResult, "exitCode" | "signal" | "timedOut" | "durationMs"> & { aborted: boolean },
  summary: OutputSummary,
  spawnError?: string,
): ExecResult {
  const { aborted, ...ended } = run;
  const result: ExecResult = { argv: [...argv], ...ended, tail: summary.tail };
  if (aborted) result.aborted = true;
  if (options.logPath !== undefined) result.logPath = options.logPath;
  if (summary.logError !== undefined) result.logError = summary.logError;
  if (summary.captured) {
    result.stdout = summary.captured.stdout;
    result.stdoutTruncated = summary.captured.truncated;
  }
  if (spawnError !== undefined) result.spawnError = spawnError;
  return result;
}

/** Runs a user-written command string through `/bin/sh -lc`: the only place a shell is used. */
export function execShell(command: string, options: ExecOptions): Promise<ExecResult> {
  return exec(["/bin/sh", "-lc", command], options);
}

function describeSpawnError(error: NodeJS.ErrnoException, file: string, cwd: string): string {
  // Node reports a missing working directory as the program being missing; say which it is.
  if (error.code === "ENOENT") return existsSync(cwd) ? `ENOENT: program ${file} not found` : `ENOENT: working directory ${cwd} does not exist`;
  // Stryker disable next-line StringLiteral: node gives every spawn error a code; the fallback only keeps the type honest.
  return `${error.code ?? "error"}: ${error.message}`;
}

/** Resolves once `promise` settles or `ms` have passed, whichever comes first. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
