/**
 * The clean-clone check: re-runs the suite in a fresh clone with the target's change committed
 * into it, because a suite that passes in a dirty working tree can fail once the change is
 * committed (a `git show HEAD:` baseline, a `git status` assertion, a file `.gitignore` keeps
 * out). Whatever happens, the scratch folder is removed and a result comes back; a clone that
 * cannot be built and an interpreter that cannot run are "did not run", never "failed" and
 * never an exception. A suite that runs out of time did run: it failed, without an exit code.
 */
import { realpathSync } from "node:fs";
import { constants } from "node:os";
import { dirname } from "node:path";
import type { EnvSpec, ExecResult } from "../exec/index.js";
import { sandboxFromEnv, type Sandbox } from "../sandbox/index.js";
import { buildCleanClone, type BuiltCleanClone } from "./clean-clone-build.js";
import { CleanCloneBuildError, CleanCloneOptionsError } from "./clean-clone-errors.js";
import { commandWithInterpreter, interpreterVersion, InterpreterError, pathWithInterpreter, resolveInterpreter } from "./clean-clone-interpreter.js";
import { validateLinkName } from "./clean-clone-links.js";
import { makeScratch, removeScratch } from "./clean-clone-scratch.js";

/** Time the suite gets when the caller names none. */
export const DEFAULT_CLEAN_CLONE_TIMEOUT_MS = 600_000;
/** Bounds of `outputTail`: enough of a failing suite's end for a retried implementer to act on. */
export const CLEAN_CLONE_TAIL_LINES = 80;
export const CLEAN_CLONE_TAIL_BYTES = 16 * 1024;

export interface CleanCloneOptions {
  /** The target repository (any folder inside its working tree); the suite runs at its counterpart. */
  repo: string;
  /** The suite, a user-written shell command run through `/bin/sh -lc`. */
  command: string;
  /** Ignored dependency roots linked from the target; defaults per ecosystem. */
  links?: readonly string[];
  /** Path (or bare name looked up on PATH) of the runtime to target; its folder goes first on PATH. */
  interpreter?: string;
  timeoutMs?: number;
  /** The suite's full output is appended here. */
  logPath?: string;
  /** What the suite receives beyond the exec allowlist (never the App's credentials). */
  env?: EnvSpec;
  /** Where the scratch folder is made; the OS temp folder by default. */
  scratchRoot?: string;
  /** Where the suite runs; the operator's sandbox (`HARNESS_SANDBOX`) when absent. */
  sandbox?: Sandbox;
  /** The suite gets the network (`test.network`); off by default. */
  network?: boolean;
}

/** The shape of `clean-clone-result.json`; optional fields are absent, never null. */
export interface CleanCloneResult {
  ran: boolean;
  command: string;
  interpreter?: string;
  interpreterVersion?: string;
  exitCode?: number;
  outputTail?: string;
  /** Wall time of the whole check: construction, suite and cleanup of the clone. */
  durationMs: number;
  /** The clone's commit holding the change. */
  commit?: string;
  timedOut?: boolean;
  /** Why the check did not run (present exactly when `ran` is false). */
  reason?: string;
}

function checkOptions(options: CleanCloneOptions): void {
  if (options.command.trim() === "") throw new CleanCloneOptionsError("command", options.command, "must not be empty");
  options.links?.forEach((name, index) => validateLinkName(name, `links[${index}]`));
  const timeout = options.timeoutMs;
  if (timeout !== undefined && (!Number.isSafeInteger(timeout) || timeout <= 0)) {
    throw new CleanCloneOptionsError("timeoutMs", String(timeout), "must be a positive integer");
  }
  if (options.interpreter !== undefined && options.interpreter.trim() === "") throw new CleanCloneOptionsError("interpreter", options.interpreter, "must not be empty");
}

/** A shell's convention for a child ended by a signal: 128 plus the signal's number. */
function exitCodeOf(result: ExecResult): number | undefined {
  if (result.exitCode !== null) return result.exitCode;
  if (result.signal !== null) return 128 + (constants.signals[result.signal] ?? 0);
  return undefined;
}

async function runSuite(options: CleanCloneOptions, clone: BuiltCleanClone, interpreter: string | undefined): Promise<Partial<CleanCloneResult>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CLEAN_CLONE_TIMEOUT_MS;
  const set: Record<string, string> = { ...options.env?.set };
  if (interpreter !== undefined) set.PATH = pathWithInterpreter(interpreter, set.PATH ?? process.env.PATH ?? "");
  const command = interpreter === undefined ? options.command : commandWithInterpreter(options.command, interpreter);
  // Sandboxed: the clone is writable, the target only readable (linked dependency roots
  // point into it), the network off unless asked for.
  const result = await (options.sandbox ?? sandboxFromEnv()).shell(command, {
    cwd: clone.workDir,
    env: { allow: options.env?.allow ?? [], set },
    timeoutMs,
    tailLines: CLEAN_CLONE_TAIL_LINES,
    tailBytes: CLEAN_CLONE_TAIL_BYTES,
    ...(options.logPath !== undefined ? { logPath: options.logPath } : {}),
  }, { purpose: "clean-clone", network: options.network === true, writable: [clone.cloneDir], readable: [options.repo, ...(interpreter !== undefined ? [interpreterPrefix(interpreter)] : [])] });
  const outcome: Partial<CleanCloneResult> = { outputTail: result.tail, commit: clone.commit };
  const exitCode = exitCodeOf(result);
  // A suite that hangs once the change is committed is the change's failure, not the harness's:
  // it ran, it has no exit code, and the story retries like any other failing run.
  if (result.timedOut) return { ...outcome, ran: true, timedOut: true };
  if (result.spawnError !== undefined || exitCode === undefined) return { ...outcome, ran: false, reason: `the suite could not be started: ${result.spawnError ?? "no exit status"}` };
  return { ...outcome, ran: true, exitCode };
}

/** The installation an interpreter belongs to (`<prefix>/bin/python` → `<prefix>`), which the suite must be able to read. */
function interpreterPrefix(interpreter: string): string {
  return dirname(dirname(realpathSync(interpreter)));
}

/**
 * Runs the clean-clone check. Rejects only for malformed options
 * ({@link CleanCloneOptionsError}) or a scratch folder that cannot be made or removed; a build
 * failure or an unusable interpreter resolve as `ran: false` with a `reason`; a timeout as
 * `ran: true, timedOut: true` with no exit code. The scratch folder is removed in every case.
 */
export async function runCleanCloneCheck(options: CleanCloneOptions): Promise<CleanCloneResult> {
  checkOptions(options);
  const started = performance.now();
  const scratch = await makeScratch(options.scratchRoot);
  const result: Partial<CleanCloneResult> = {};
  try {
    let interpreter: string | undefined;
    if (options.interpreter !== undefined) {
      // Recorded as asked first, so a result about an unusable interpreter still names it.
      result.interpreter = options.interpreter;
      interpreter = await resolveInterpreter(options.interpreter, process.cwd(), options.env?.set?.PATH ?? process.env.PATH);
      result.interpreter = interpreter;
      result.interpreterVersion = await interpreterVersion(interpreter, scratch);
    }
    const clone = await buildCleanClone({ repo: options.repo, scratchDir: scratch, ...(options.links ? { links: options.links } : {}) });
    Object.assign(result, await runSuite(options, clone, interpreter));
  } catch (error) {
    // The pipeline must always get a verdict to record, so even a fault of the harness itself
    // comes back as "did not run", labelled as such.
    const known = error instanceof CleanCloneBuildError || error instanceof InterpreterError;
    const message = error instanceof Error ? error.message : String(error);
    Object.assign(result, { ran: false, reason: known ? message : `internal error: ${message}` });
  } finally {
    await removeScratch(scratch);
  }
  return ordered(options.command, result, Math.round(performance.now() - started));
}

/** The result with its keys in the pinned order and no undefined values. */
function ordered(command: string, partial: Partial<CleanCloneResult>, durationMs: number): CleanCloneResult {
  const full: CleanCloneResult = { ...partial, ran: partial.ran ?? false, command, durationMs };
  const keys: (keyof CleanCloneResult)[] = ["ran", "command", "interpreter", "interpreterVersion", "exitCode", "outputTail", "durationMs", "commit", "timedOut", "reason"];
  const out: Record<string, unknown> = {};
  for (const key of keys) if (full[key] !== undefined) out[key] = full[key];
  return out as unknown as CleanCloneResult;
}
