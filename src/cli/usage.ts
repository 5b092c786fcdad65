/** A command line that cannot run: exit 2 with a one-line reason and the usage. */
import type { FailureClass } from "../pipeline/index.js";
export class UsageError extends Error {
  readonly failureClass = "usage" satisfies FailureClass;
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

/** Streams a command writes to; tests pass their own. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Parses a strictly positive integer option, naming it when it is not one. */
export function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${name} must be a positive integer, got '${value}'`);
  }
  return Number(value);
}
