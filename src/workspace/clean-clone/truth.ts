/**
 * The interpreter the result names must be the one the suite ran under. Targeting an
 * interpreter puts its folder first on PATH; a command that names another interpreter by path
 * (`.venv/bin/python -m pytest`) or through a script's `#!` line is not changed by that, so the
 * result records what the command invokes where that can be known, and warns about the difference.
 */
import { dirname, relative } from "node:path";
import { keepLastBytes } from "../../exec/index.js";
import type { CleanCloneOptions } from "./options.js";
import { invokedInterpreter, sameFile } from "./invoked.js";
import type { CleanCloneResult } from "./record.js";
import type { BuiltCleanClone } from "./build.js";
import { cloneStep, suiteEnvSet } from "./run-suite.js";
import { launchInClone } from "./suite.js";

/** Asks `program` its version the way the suite would run it; undefined when it cannot say. */
async function probeVersion(program: string, clone: BuiltCleanClone, options: CleanCloneOptions, interpreter: string | undefined): Promise<string | undefined> {
  const result = await launchInClone(
    [program, "--version"],
    {
      cwd: clone.workDir,
      // Stryker disable next-line ArrayDeclaration: a name that is no variable name allows nothing
      env: { allow: options.env?.allow ?? [], set: suiteEnvSet(options, interpreter, clone.cloneDir) },
      timeoutMs: 30_000,
      tailLines: 5,
      tailBytes: 4096,
    },
    cloneStep(options, clone, interpreter),
  );
  if (result.exitCode !== 0 || result.timedOut) return undefined;
  const line = keepLastBytes(result.tail.trim().split("\n").pop() ?? "", 256).trim();
  return line === "" ? undefined : line;
}

/** A path inside the clone is named relative to the clone, since the clone is gone afterwards. */
function displayed(path: string, workDir: string): string {
  const rel = relative(workDir, path);
  return rel.startsWith("..") ? path : rel;
}

/**
 * The `interpreter`, `interpreterVersion` and `warnings` the result should carry, given what
 * `result` already holds about the targeted interpreter.
 */
export async function describeInvoked(
  options: CleanCloneOptions,
  clone: BuiltCleanClone,
  interpreter: string | undefined,
  result: Partial<CleanCloneResult>,
): Promise<Partial<CleanCloneResult>> {
  const workDir = clone.workDir;
  // The suite's own PATH: the clone's .venv and the targeted interpreter's folder first.
  const searchPath = suiteEnvSet(options, interpreter, clone.cloneDir).PATH ?? process.env.PATH ?? "";
  const invoked = await invokedInterpreter(options.command, workDir, searchPath);
  const warnings: string[] = [...(result.warnings ?? [])];
  if (invoked === undefined) {
    if (interpreter !== undefined)
      warnings.push(`could not tell which interpreter the command invokes; interpreterVersion is the targeted interpreter's (${interpreter})`);
    return { warnings };
  }
  // Stryker disable next-line ConditionalExpression: sameFile of a path and no interpreter is false too (the realpath of undefined fails)
  if (interpreter !== undefined && (await sameFile(invoked.path, interpreter))) return { warnings };
  const name = displayed(invoked.path, workDir);
  const version = await probeVersion(invoked.path, clone, options, interpreter);
  if (interpreter === undefined) {
    return version === undefined
      ? { interpreter: name, warnings: [...warnings, `could not ask ${name} its version`] }
      : { interpreter: name, interpreterVersion: version, warnings };
  }
  const how = invoked.byPath ? "names it by path" : "finds it on PATH";
  warnings.push(
    `the command invokes ${name}${version !== undefined ? ` (${version})` : ""}, not the targeted interpreter ${interpreter} (${result.interpreterVersion ?? "version unknown"}): ` +
      `targeting puts ${dirname(interpreter)} first on PATH, and the command ${how}`,
  );
  // The targeted version is no longer what the result is about; a probe that failed leaves none.
  return { interpreter: name, interpreterVersion: version, warnings };
}
