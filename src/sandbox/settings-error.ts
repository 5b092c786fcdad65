/** The error a sandbox setting that cannot be used raises. */
import type { FailureClass } from "../failure/index.js";

/** A setting of the sandbox that cannot be used; names the variable. */
export class SandboxSettingsError extends Error {
  readonly failureClass = "environment" satisfies FailureClass;
  constructor(
    readonly variable: string,
    readonly value: string,
    reason: string,
  ) {
    super(`${variable}=${JSON.stringify(value)} ${reason}`);
    this.name = "SandboxSettingsError";
  }
}
