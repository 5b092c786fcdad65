/**
 * Errors of the clean-clone check. A clone that cannot be built is the harness's failure, not
 * the suite's: it has its own class so the pipeline reports "did not run", never "tests failed".
 */
import { keepLastBytes } from "../../exec/index.js";
import type { FailureClass } from "../../failure/index.js";

/**
 * Most bytes of a build error's detail. The detail becomes the result's `reason`, the journal's
 * record and a retried implementer's context; git's words (a filter's command line, a path) and
 * the harness's own lists can be any length, and the end of git's output is what says why.
 */
export const CLEAN_CLONE_DETAIL_BYTES = 4096;
/** What a cut detail starts with (ASCII, so its length is its bytes). */
const CUT_MARK = "... ";

/** The construction step that failed. */
export type CleanCloneBuildStep = "resolve" | "commit" | "refuse" | "clone" | "link" | "provision";

/** The scratch clone could not be built; {@link runCleanCloneCheck} turns it into `ran: false`. */
export class CleanCloneBuildError extends Error {
  /** What went wrong, in git's words when git said it (bounded). */
  readonly detail: string;
  readonly failureClass = "clean-clone-build-failed" satisfies FailureClass;
  constructor(
    readonly step: CleanCloneBuildStep,
    /** The target repository as given. */
    readonly repo: string,
    /** What went wrong, in git's words when git said it; only its last {@link CLEAN_CLONE_DETAIL_BYTES} are kept. */
    detail: string,
    /** The tree of the commit that was refused (step `refuse`): what the user's commit would record. */
    readonly tree?: string,
  ) {
    const kept = keepLastBytes(detail, CLEAN_CLONE_DETAIL_BYTES - CUT_MARK.length);
    const bounded = kept.length < detail.length ? `${CUT_MARK}${kept}` : detail;
    super(`clean clone of ${repo} could not be built (${step}): ${bounded}`);
    this.name = "CleanCloneBuildError";
    this.detail = bounded;
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
