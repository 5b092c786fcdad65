/**
 * Errors of the clean-clone check. A clone that cannot be built is the harness's failure, not
 * the suite's: it has its own class so the pipeline reports "did not run", never "tests failed".
 */
import type { FailureClass } from "../../pipeline/index.js";

/** The construction step that failed. */
export type CleanCloneBuildStep = "resolve" | "commit" | "refuse" | "clone" | "link" | "provision";

/** The scratch clone could not be built; {@link runCleanCloneCheck} turns it into `ran: false`. */
export class CleanCloneBuildError extends Error {
  readonly failureClass = "clean-clone-build-failed" satisfies FailureClass;
  constructor(
    readonly step: CleanCloneBuildStep,
    /** The target repository as given. */
    readonly repo: string,
    /** What went wrong, in git's words when git said it (bounded). */
    readonly detail: string,
    /** The tree of the commit that was refused (step `refuse`): what the user's commit would record. */
    readonly tree?: string,
  ) {
    super(`clean clone of ${repo} could not be built (${step}): ${detail}`);
    this.name = "CleanCloneBuildError";
  }
}

/** An option of the check is malformed; names the option (for example `links[2]`). */
export class CleanCloneOptionsError extends Error {
  readonly failureClass = "config-invalid" satisfies FailureClass;
  constructor(
    readonly field: string,
    readonly value: string,
    readonly problem: string,
  ) {
    super(`clean-clone option ${field} ${problem} (got ${JSON.stringify(value)})`);
    this.name = "CleanCloneOptionsError";
  }
}
