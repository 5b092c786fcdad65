/**
 * The one place where repository code runs for the clean-clone check: the suite, and the
 * version probe of the interpreter the suite invokes. Kept to one function so that running it
 * inside a sandbox is a change of this function alone.
 */
import { exec, type ExecOptions, type ExecResult } from "../../exec/index.js";

/** Runs `argv` in the clean clone (the suite is `["/bin/sh", "-lc", command]`). */
export function launchInClone(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
  return exec(argv, options);
}
