/** Running the suite in the built clone and reading how it ended. */
import { stripAnsi } from "../../text/index.js";
import { constants } from "node:os";
import type { ExecResult } from "../../exec/index.js";
import type { BuiltCleanClone } from "./build.js";
import type { CleanCloneOptions } from "./options.js";
import { venvEnv } from "../provision/index.js";
import { commandWithInterpreter, pathWithInterpreter } from "./interpreter.js";
import type { CleanCloneResult } from "./record.js";
import { launchInClone, type CloneStep } from "./suite.js";

/** Bounds of `outputTail`: enough of a failing suite's end for a retried implementer to act on. */
export const CLEAN_CLONE_TAIL_LINES = 80;
export const CLEAN_CLONE_TAIL_BYTES = 16 * 1024;

/** A shell's convention for a child ended by a signal: 128 plus the signal's number. */
function exitCodeOf(result: ExecResult): number | undefined {
  if (result.exitCode !== null) return result.exitCode;
  if (result.signal !== null) return 128 + (constants.signals[result.signal] ?? 0);
  return undefined;
}

/**
 * The variables the suite gets beyond the exec allowlist: `CI=true` as every CI service sets it
 * (unless the caller sets CI), the caller's values, the clone's `.venv` (when provisioning made
 * one) and before it the targeted interpreter's folder first on PATH.
 */
export function suiteEnvSet(options: CleanCloneOptions, interpreter: string | undefined, cloneDir?: string): Record<string, string> {
  const set: Record<string, string> = { CI: "true", ...options.env?.set };
  if (cloneDir !== undefined) Object.assign(set, venvEnv(cloneDir, set.PATH ?? process.env.PATH ?? ""));
  if (interpreter !== undefined) set.PATH = pathWithInterpreter(interpreter, set.PATH ?? process.env.PATH ?? "");
  return set;
}

/** The sandbox step of the suite (and of the probe of what it invokes). */
export function cloneStep(options: CleanCloneOptions, clone: BuiltCleanClone, interpreter: string | undefined): CloneStep {
  return {
    cloneDir: clone.cloneDir,
    targetTop: clone.targetTop,
    sandbox: options.sandbox,
    ...(options.network !== undefined ? { network: options.network } : {}),
    ...(interpreter !== undefined && options.interpreterFromOperator === true ? { interpreter } : {}),
  };
}

/** Runs the suite in `clone.workDir`; a timeout is a run that failed, a spawn failure "did not run". */
export async function runSuite(
  options: CleanCloneOptions,
  clone: BuiltCleanClone,
  interpreter: string | undefined,
  defaultTimeoutMs: number,
): Promise<Partial<CleanCloneResult>> {
  // Under `sh -c` (no login profile) the environment's PATH already starts with the interpreter's
  // folder; the prefix keeps it first should a profile or a sandbox reset PATH.
  // Stryker disable next-line ConditionalExpression: see above
  const command = interpreter === undefined ? options.command : commandWithInterpreter(options.command, interpreter);
  const result = await launchInClone(
    ["/bin/sh", "-c", command],
    {
      cwd: clone.workDir,
      // Stryker disable next-line ArrayDeclaration: a name that is no variable name allows nothing
      env: { allow: options.env?.allow ?? [], set: suiteEnvSet(options, interpreter, clone.cloneDir) },
      timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
      tailLines: CLEAN_CLONE_TAIL_LINES,
      tailBytes: CLEAN_CLONE_TAIL_BYTES,
      // Stryker disable next-line ConditionalExpression: a logPath of undefined is no log to exec
      ...(options.logPath !== undefined ? { logPath: options.logPath } : {}),
    },
    cloneStep(options, clone, interpreter),
  );
  // Colour codes (a compiler's diagnostics, a runner that colours anyway) are noise in the JSON and on GitHub.
  const outcome: Partial<CleanCloneResult> = { outputTail: stripAnsi(result.tail), commit: clone.commit };
  const exitCode = exitCodeOf(result);
  // A suite that hangs once the change is committed is the change's failure, not the harness's:
  // it ran, it has no exit code, and the story retries like any other failing run.
  if (result.timedOut) return { ...outcome, ran: true, timedOut: true };
  // exec reports a spawnError exactly when the child has neither an exit code nor a signal: either test alone would do.
  // Stryker disable next-line ConditionalExpression,LogicalOperator: see above
  if (result.spawnError !== undefined || exitCode === undefined)
    return { ...outcome, ran: false, reason: `the suite could not be started: ${result.spawnError ?? "no exit status"}` };
  const missing = exitCode === 127 ? missingProgram(result.tail) : undefined;
  if (missing !== undefined)
    return {
      ...outcome,
      ran: false,
      reason: `the suite could not be run: exit 127, ${missing.line}: a program it starts is not installed, or not visible in the sandbox (an operator who trusts its installation adds its folder to HARNESS_SANDBOX_READ)`,
    };
  return { ...outcome, ran: true, exitCode };
}

/**
 * Why a suite ended with 127, when that is the shell's "not found" for a program rather than a
 * file of the commit: `./scripts/test.sh: not found` is the change's (a script the commit left
 * out), `pytest: not found` is the environment's. A 127 the shell did not explain counts as the environment's too.
 */
function missingProgram(tail: string): { line: string } | undefined {
  const lines = tail.trimEnd().split("\n");
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index]?.trim() ?? "";
    const name = /(?:^|:\s)(\S+): (?:command )?not found$/.exec(line)?.[1] ?? /(?:^|:\s)(\S+): No such file or directory$/.exec(line)?.[1];
    if (name === undefined) continue;
    // A relative path names a file of the clone: the commit's own.
    if (name.includes("/") && !name.startsWith("/")) return undefined;
    return { line };
  }
  return { line: "the shell's code for a command that could not be found" };
}
