/** The one error of provisioning: blocked infrastructure, never an agent failure. */
import { provisionLogTail } from "./tail.js";
import type { FailureClass } from "../../failure/index.js";

/** What a provisioning failure records. */
export interface ProvisionFailure {
  cmd: string | null;
  exitCode: number | null;
  logPath: string;
  logTail: string;
  taskId?: string;
  phase?: string;
  timedOut?: boolean;
  attempts?: number;
}

/**
 * A worktree could not be provisioned (both attempts failed), or was entered without a
 * receipt. `logTail` is bounded to 20 lines and 64 KiB of UTF-8: the log's error lines, then its last lines.
 */
export class WorkspaceProvisionError extends Error {
  readonly failureClass = "workspace-provision-failed" satisfies FailureClass;
  readonly cmd: string | null;
  readonly exitCode: number | null;
  readonly logPath: string;
  readonly logTail: string;
  readonly taskId?: string;
  readonly phase?: string;
  readonly timedOut: boolean;
  readonly attempts: number;

  constructor(message: string, failure: ProvisionFailure) {
    super(message);
    this.name = "WorkspaceProvisionError";
    this.cmd = failure.cmd;
    this.exitCode = failure.exitCode;
    this.logPath = failure.logPath;
    // Bounded here too, so no caller can put an unbounded tail into a journal or a comment;
    // the lines that carry the error are kept even when they are far from the end.
    this.logTail = failure.logTail === "" ? "" : provisionLogTail(failure.logPath, failure.logTail);
    // Declared fields exist on every instance (undefined when not given), so no check is needed.
    this.taskId = failure.taskId;
    this.phase = failure.phase;
    this.timedOut = failure.timedOut ?? false;
    this.attempts = failure.attempts ?? 0;
  }
}
