/** Short replies to the people who label issues and run commands. */
import type { FailureClass } from "../../../pipeline/index.js";
import { KNOWN_COMMANDS } from "../../commands/index.js";
import { boundComment } from "../../index.js";
import { RETRY_COMMAND } from "./advice.js";
import { codeBlock, inlineCode } from "./markdown.js";

const DESCRIPTIONS: Record<(typeof KNOWN_COMMANDS)[number], string> = {
  "retry-blocked": "re-admit a blocked story in a fresh worktree (on the story's pull request or issue)",
  revise: "revise the story's open pull request with the text that follows (counts as a round of `iterate.max_rounds`)",
  "accept-integrity":
    "re-admit a blocked story with the test-integrity gate's findings accepted in your name (a deleted or skipped test, a changed test command or CI workflow the story needs)",
  help: "list these commands",
};

/** The list of commands with one line each. */
export function renderHelp(): string {
  const lines = ["story-harness commands (write access needed), at the start of a line:", ""];
  for (const name of KNOWN_COMMANDS) lines.push(`- \`/harness ${name}\`: ${DESCRIPTIONS[name]}`);
  return lines.join("\n");
}

/** Reply to a `/harness <name>` the App does not know. */
export function renderUnknownCommand(name: string): string {
  return boundComment(`Unknown command ${inlineCode(`/harness ${name}`)}.\n\n${renderHelp()}`);
}

/** Reply when the commenter lacks write access. */
export function renderNotPermitted(login: string): string {
  return `@${login} only people with write, maintain or admin permission on this repository can run story-harness commands.`;
}

/** Reply when whoever labelled or re-admitted a story has no write access when its job starts (never had, or lost it since). */
export function renderNotAdmitted(login: string, issueNumber: number): string {
  return `Story #${issueNumber} was not started: @${login}, who asked for it, does not have write, maintain or admin permission on this repository now. Someone with write access can label it again or comment \`${RETRY_COMMAND}\`.`;
}

/** Reply when a story is labelled or retried while it is already queued or running. */
export function renderAlreadyActive(issueNumber: number): string {
  return `Story #${issueNumber} is already queued or running; nothing new was started.`;
}

/** Reply when a story is labelled again after it completed. */
export function renderAlreadyCompleted(issueNumber: number, pullUrl: string): string {
  return `Story #${issueNumber} already completed: ${pullUrl}. Nothing new was started.`;
}

/** Reply when a blocked story is labelled again: only the retry command re-admits it. */
export function renderBlockedUseRetry(issueNumber: number): string {
  return `Story #${issueNumber} is blocked. To re-admit it in a fresh worktree, comment \`${RETRY_COMMAND}\` on its pull request.`;
}

/** Reply when retry-blocked is asked of a story that is not blocked. */
export function renderNotBlocked(issueNumber: number, active: boolean): string {
  const state = active ? "is queued or running" : "is not blocked (no `harness:blocked` label)";
  return `Story #${issueNumber} ${state}, so \`${RETRY_COMMAND}\` does nothing.`;
}

/** Reply when retry-blocked is asked where there is no story. */
export function renderNotAStory(what: "issue" | "pull request", labelName: string): string {
  return what === "issue"
    ? `This issue is not a story (it has no \`${labelName}\` label), so \`${RETRY_COMMAND}\` does nothing.`
    : `This pull request was not opened by story-harness (its branch is not \`harness/story-<issue>\`), so \`${RETRY_COMMAND}\` does nothing.`;
}

/** Acknowledgement that a blocked story was re-admitted. */
export function renderReadmitted(issueNumber: number, acceptedBy?: string): string {
  const accepting = acceptedBy !== undefined ? `, with the test-integrity findings accepted by @${acceptedBy}` : "";
  return `Re-admitting story #${issueNumber} in a fresh worktree${accepting}.`;
}

/** Told on a story whose queued job file could not be read and was set aside. */
export function renderQuarantinedJob(file: string, reason: string, kept?: string): string {
  const where = kept
    ? `it was set aside in ${inlineCode(kept.slice(0, 1500))}`
    : `the file was moved to ${inlineCode(`queue/quarantine/${file}`)} on the App's machine`;
  return boundComment(
    `story-harness could not read the queued job of this story; ${where} ` +
      `and the job will not run.\n\nWhy: ${inlineCode(reason.slice(0, 2000))}\n\n` +
      "Label the issue again (or run `/harness retry-blocked` on its pull request) to queue it afresh.",
  );
}

/** Told on a story whose job could not start because the App's data directory refused a write. */
export function renderWriteFailure(code: string | undefined): string {
  const why = code === "ENOSPC" ? "its data directory is full (ENOSPC)" : `a write to its data directory failed${code ? ` (${code})` : ""}`;
  return `story-harness could not start this story yet: ${why}. The story stays queued and starts on its own once the App can write again.`;
}

/** Told on the issue when its story started, linking the pull request it is worked on in. */
export function renderStoryStarted(pullNumber: number, pullUrl: string): string {
  return `Started this story in #${pullNumber} (${pullUrl}).`;
}

/** Told on the issue when a story stopped outside its reporter: it never started, or its finished work could not be delivered. */
export function renderStoryStopped(
  what: "could not start" | "finished, but its result could not be delivered",
  failureClass: FailureClass,
  detail: string,
): string {
  return boundComment(`story-harness: this story ${what} (${failureClass}):\n\n${codeBlock(detail.slice(0, 4000))}`);
}

/** Reply when a revision is asked for while a run of the story is queued or running: one run at a time per story. */
/** The reply to a revision trigger that arrived while a run of its story was queued or running: batched into the next round. */
export function renderRevisionBatched(issueNumber: number): string {
  return `Story #${issueNumber} is running (or queued) now; this feedback is kept and batched into its next revision round, which starts once the current run has reported.`;
}

/** The reply to a revision trigger the queue could not batch (a queue that keeps one job per story). */
export function renderRevisionWaits(issueNumber: number): string {
  return `Story #${issueNumber} is running (or queued) now; this revision was not queued. Submit it again, or comment \`/harness revise <text>\`, once the current run has reported.`;
}

/** Reply to a `/harness revise` without instructions, or on a pull request that is closed (merged or not). */
export function renderReviseNeedsText(closed: boolean): string {
  return closed
    ? "This pull request is closed: a story revises only its open pull request. Nothing was queued."
    : "`/harness revise` needs instructions after it, for example `/harness revise rename greet() to hello()`. Nothing was queued.";
}

/** Said when a revision cannot run: the story's pull request was merged or closed, or its branch is gone. */
export function renderRevisionNotPossible(issueNumber: number, pull: { url: string; merged: boolean; state: string } | undefined): string {
  if (!pull) return `Story #${issueNumber} has no open pull request or branch any more; the revision started nothing.`;
  return `Story #${issueNumber}'s pull request ${pull.url} is ${pull.merged ? "merged" : pull.state}: the revision started nothing.`;
}
