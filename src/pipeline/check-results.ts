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

/** A baseline under way (baseline-pending.ts starts it beside the task's first seat). */
export interface PendingBaseline {
  /** Its answer: an `environment` failure when the test command cannot start on the base, else undefined (the result is on the task). */
  settle(): Promise<CheckFailure | undefined>;
  /** Stops it when the task ended before it was needed, and waits until its checkout is gone. */
  stop(): Promise<void>;
}
