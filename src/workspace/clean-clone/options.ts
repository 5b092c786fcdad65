/** Checks the options of a clean-clone check before anything runs, naming the bad field. */
import type { CleanCloneOptions } from "./check.js";
import { CleanCloneOptionsError } from "./errors.js";
import { validateLinkName } from "./links.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function positive(field: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) throw new CleanCloneOptionsError(field, String(value), "must be a positive integer");
}

/** Throws {@link CleanCloneOptionsError} naming the first malformed option. */
export function checkOptions(options: CleanCloneOptions): void {
  if (options.command.trim() === "") throw new CleanCloneOptionsError("command", options.command, "must not be empty");
  options.links?.forEach((name, index) => validateLinkName(name, `links[${index}]`));
  positive("timeoutMs", options.timeoutMs);
  positive("depth", options.depth);
  if (options.interpreter !== undefined && options.interpreter.trim() === "") throw new CleanCloneOptionsError("interpreter", options.interpreter, "must not be empty");
  options.env?.allow?.forEach((name, index) => {
    if (!ENV_NAME.test(name)) throw new CleanCloneOptionsError(`env.allow[${index}]`, name, "must be an environment variable name");
  });
}
