/**
 * The check can target a runtime other than the harness's own (CI's oldest Python, another
 * Node): the interpreter's directory goes first on the suite's PATH, and its version is
 * recorded so a reader knows which runtime the verdict is about.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { keepLastBytes, type ExecResult } from "../../exec/index.js";
import type { FailureClass } from "../../failure/index.js";

/** Why an interpreter cannot be used; reported as the check's `reason`. */
export class InterpreterError extends Error {
  readonly failureClass = "clean-clone-interpreter" satisfies FailureClass;
  constructor(
    readonly interpreter: string,
    readonly detail: string,
  ) {
    super(`interpreter ${interpreter} ${detail}`);
    this.name = "InterpreterError";
  }
}

/** True for a regular file this process may execute. */
export async function isExecutableFile(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves `interpreter` to an absolute path: a bare name (`python3.10`) is looked up on
 * `searchPath`, a relative path is resolved against `cwd` (where the suite runs, in the clone)
 * and must stay inside `root` (the clone): the name comes from the repository's own
 * configuration, and resolved against the App's working directory a `../..` reaches anything the
 * App can read. Symlinks are kept as they are, since a virtualenv's `bin/python` must stay
 * inside its `bin/`; the sandbox decides what a link can reach when it runs.
 */
export async function resolveInterpreter(interpreter: string, cwd: string, searchPath: string = process.env.PATH ?? "", root: string = cwd): Promise<string> {
  if (!interpreter.includes("/")) {
    for (const dir of searchPath.split(delimiter).filter((entry) => isAbsolute(entry))) {
      const candidate = join(dir, interpreter);
      if (await isExecutableFile(candidate)) return candidate;
    }
    throw new InterpreterError(interpreter, "was not found on PATH");
  }
  const path = resolve(cwd, interpreter);
  const inside = relative(root, path);
  if (!isAbsolute(interpreter) && (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside))) {
    throw new InterpreterError(interpreter, "leaves the repository: clean_clone.interpreter, when relative, names a file inside the clone");
  }
  if (!(await isExecutableFile(path))) throw new InterpreterError(path, "is not an executable file");
  return path;
}

/** The PATH a suite gets when it targets `interpreter`: the interpreter's folder first. */
export function pathWithInterpreter(interpreter: string, basePath: string): string {
  return basePath === "" ? dirname(interpreter) : `${dirname(interpreter)}${delimiter}${basePath}`;
}

/** Single-quotes `text` for `/bin/sh`. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Prefixes a user-written command so the interpreter's folder is first on PATH when the command
 * starts: the suite runs in a login shell (`sh -lc`), and a login profile may reset PATH, so the
 * environment alone does not survive.
 */
export function commandWithInterpreter(command: string, interpreter: string): string {
  return `PATH=${shellQuote(dirname(interpreter))}:"$PATH"; export PATH\n${command}`;
}

/** How the version probe is started: in the sandbox, as the suite would be (suite.ts). */
export type LaunchProbe = (argv: readonly string[], bounds: { timeoutMs: number; tailLines: number; tailBytes: number }) => Promise<ExecResult>;

/**
 * Runs `<interpreter> --version` (output on stdout or stderr, as Python 2 does) through `launch`
 * and returns its last line. The interpreter is a program the repository names, so `launch` is
 * the sandbox, never a plain exec of the App's.
 */
export async function interpreterVersion(interpreter: string, launch: LaunchProbe): Promise<string> {
  const result = await launch([interpreter, "--version"], { timeoutMs: 30_000, tailLines: 5, tailBytes: 4096 });
  const text = result.tail.trim();
  if (result.exitCode !== 0 || result.timedOut) {
    const why = result.spawnError ?? (result.timedOut ? "timed out" : `exited ${result.exitCode ?? result.signal ?? "abnormally"}`);
    throw new InterpreterError(interpreter, `could not report its version (--version ${why})`);
  }
  return keepLastBytes(text.split("\n").pop() ?? "", 256).trim();
}
