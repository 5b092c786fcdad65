/**
 * The one place where repository code runs for the clean-clone check: the suite, and the
 * version probe of the interpreter the suite invokes. Both run in the operator's sandbox
 * (`HARNESS_SANDBOX`) as a `clean-clone` step: the clone writable, the target (which linked
 * dependency folders point into) and the targeted interpreter's installation only readable, the
 * network off unless the repository opts in (`test.network`).
 */
import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import type { ExecOptions } from "../../exec/index.js";
import type { Sandbox, SandboxedResult } from "../../sandbox/index.js";

export interface CloneStep {
  /** The sandbox to run in: the operator's, resolved once at the edge. */
  sandbox: Sandbox;
  network?: boolean;
  /** Root of the clone: the only folder the step writes. */
  cloneDir: string;
  /** Root of the target's working tree, read through the linked folders. */
  targetTop: string;
  /** The targeted interpreter, whose installation the step must be able to read. */
  interpreter?: string;
}

/**
 * The installation an interpreter belongs to (`<prefix>/bin/python` → `<prefix>`), which the step
 * must read. The repository names the interpreter, so it must not be able to show the step the
 * whole host: a program directly under `/` or one level down (`/x/python`) gives no folder.
 */
function interpreterPrefix(interpreter: string): string[] {
  const prefix = dirname(dirname(realpathSync(interpreter)));
  return prefix === "/" ? [] : [prefix];
}

/** Runs `argv` in the clean clone (the suite is `["/bin/sh", "-c", command]`) as a sandboxed `clean-clone` step. */
export function launchInClone(argv: readonly string[], options: ExecOptions, step: CloneStep): Promise<SandboxedResult> {
  return step.sandbox.run(argv, options, {
    // Stryker disable next-line StringLiteral: the purpose is a type-level label the sandbox never reads
    purpose: "clean-clone",
    network: step.network === true,
    writable: [step.cloneDir],
    readable: [step.targetTop, ...(step.interpreter !== undefined ? interpreterPrefix(step.interpreter) : [])],
  });
}
