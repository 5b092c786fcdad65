/** What a check or the baseline found: shared by the checks, the baseline, the stages and the task. */
import type { FailureClass } from "../failure/index.js";
import type { RunCounts } from "../integrity/index.js";

/** A failed check: its class and a one-line reason a maintainer can act on. */
export interface CheckFailure {
  failureClass: FailureClass;
  reason: string;
  /** Not the change's doing (a base that is red the same way): blocks instead of retrying. */
  infrastructure?: boolean;
}

/** The baseline as the task keeps it. */
export interface BaselineResult {
  command: string;
  commit: string;
  exitCode?: number;
  timedOut: boolean;
  outputTail: string;
  durationMs: number;
  /** The tests each runner reported, read from the whole log (absent when the log could not be read). */
  counts?: RunCounts;
}
