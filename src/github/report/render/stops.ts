/**
 * Why the runner stopped a story before or outside its pipeline: the details of a blocked
 * story (shown in its status comment and check runs, or in the reply on its issue).
 */
import { RETRY_COMMAND } from "./advice.js";

/** The host cannot sandbox repository code: the story was not started. */
export function renderSandboxUnavailable(reason: string): string {
  return `The sandbox cannot run on this host, so this story was not started: ${reason}.`;
}

/** The App's data directory has less free space than `HARNESS_MIN_FREE_MB` asks for. */
export function renderLowDisk(freeBytes: number, minFreeBytes: number): string {
  const mib = (bytes: number): string => `${Math.floor(bytes / (1024 * 1024))} MiB`;
  return (
    `Only ${mib(freeBytes)} are free where the App keeps its data (HARNESS_MIN_FREE_MB asks for ${mib(minFreeBytes)}), so this story was not started. ` +
    `Free some space (old run directories go after HARNESS_RETENTION_DAYS), then use ${RETRY_COMMAND} or label the issue again.`
  );
}

/** An earlier run's push still waits in the outbox: a new run must build on it, so none started. */
export function renderPushStillWaiting(): string {
  return "An earlier run's work of this story is still waiting to be pushed (GitHub could not take it yet), so no new run was started. It is pushed on its own; label the issue again once the pull request holds it.";
}

/** The App stopped more often than it resumes a story. */
export function renderTooManyInterruptions(times: number): string {
  return `The App stopped ${times} times while this story ran; it was not resumed again. Use ${RETRY_COMMAND} to run it once more.`;
}

/** A push the job tried itself failed every time, and no outbox on disk would try again. */
export function renderPushFailed(sha: string, branch: string, attempts: number, why: string): string {
  return `Pushing ${sha.slice(0, 12)} to ${branch} failed ${attempts} times: ${why}`;
}
