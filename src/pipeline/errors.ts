/**
 * Errors of the pipeline's inputs. Each names the file and the place in it (a JSON path or a
 * key) so that a maintainer can fix the input without reading harness code.
 */
import type { FailureClass } from "./events.js";

/** An input file that is well-formed but cannot be used as written. */
abstract class InputError extends Error {
  readonly failureClass = "config-invalid" satisfies FailureClass;
  constructor(
    /** The file (workflow, prompt template, `.github/harness.yml`). */
    readonly source: string,
    /** JSON path of the offending value (`$.stages[1].prompt`, `$.agent.env[1]`). */
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${source}: ${path} ${reason}`);
  }
}

/** A workflow (or one of its prompt templates) that cannot run. */
export class WorkflowError extends InputError {
  override readonly name = "WorkflowError";
}

/** A repository or operator configuration that cannot be used as written. */
export class ConfigError extends InputError {
  override readonly name = "ConfigError";
}

/** A story's plan that cannot run: invalid JSON or schema, a cycle, unknown or repeated ids, overlapping files in one wave. */
export class PlanError extends InputError {
  override readonly name = "PlanError";
  constructor(
    source: string,
    path: string,
    reason: string,
    /** The task ids the problem is about. */
    readonly taskIds: readonly string[] = [],
  ) {
    super(source, path, reason);
  }
}
