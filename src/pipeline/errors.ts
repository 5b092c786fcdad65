/**
 * Errors of the pipeline's inputs. Each names the file and the place in it (a JSON path or a
 * key) so that a maintainer can fix the input without reading harness code.
 */

/** A workflow (or one of its prompt templates) that is well-formed JSON but cannot run. */
export class WorkflowError extends Error {
  readonly failureClass = "config-invalid";
  constructor(
    /** The workflow or template file. */
    readonly source: string,
    /** JSON path of the offending value in the workflow (`$.stages[1].prompt`). */
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${source}: ${path} ${reason}`);
    this.name = "WorkflowError";
  }
}

/** A repository or operator configuration that cannot be used as written. */
export class ConfigError extends Error {
  readonly failureClass = "config-invalid";
  constructor(
    readonly source: string,
    /** The offending key, as a JSON path (`$.agent.env[1]`). */
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${source}: ${path} ${reason}`);
    this.name = "ConfigError";
  }
}
