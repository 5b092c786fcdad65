import {
  git,
  gitResult,
  HARNESS_IDENTITY,
  indexMayHold,
  NO_AUTO_MAINTENANCE,
  NO_SUBMODULE_STATUS,
  PROVISION_RECEIPT,
  readHeadCommit,
  stageAll,
} from "../workspace/index.js";
import type { FailureClass } from "./events.js";

/** The message of a story commit: names the story; the trailers say which story and, when blocked, why. */
export function storyCommitMessage(story: { id: string; title: string }, failureClass?: FailureClass, detail?: string): string {
  const title = story.title.replace(/\s+/g, " ").trim();
  const subject = `${failureClass ? "Blocked story" : "Story"} ${story.id}: ${title}`.slice(0, 72);
  const body = failureClass
    ? `The harness stopped this story (${failureClass}). The work so far is committed as it stood.\n\n${(detail ?? "").trim()}`
    : "Implemented, tested, verified and documented by story-harness.";
  const trailers = [`Story: ${story.id}`, ...(failureClass ? [`Failure-Class: ${failureClass}`] : [])];
  return `${subject}\n\n${body.trim()}\n\n${trailers.join("\n")}\n`;
}

/**
 * Commits everything in a task worktree to its branch, except the provisioning receipt
 * (listed in `info/exclude`, and unstaged again here should anything have forced it in). With
 * `stage: false` nothing is added: an empty commit records an outcome without picking up
 * files a failed provisioning left behind. Returns the new commit.
 *
 * Three git processes in the usual case (up to two more when the index records gitlinks): the
 * receipt is unstaged only when the index may hold it, and the new commit is read from the branch's ref file (git is asked only when the
 * layout is not the plain one).
 */
export async function commitWorktree(worktree: string, message: string, options: { stage: boolean }): Promise<string> {
  if (options.stage) {
    // Not `git add --all`: it would run `git status` inside a nested repository, under the agent's config.
    await stageAll({ cwd: worktree });
    if (indexMayHold(worktree, PROVISION_RECEIPT))
      await gitResult(["rm", "--cached", "--quiet", "--ignore-unmatch", "--", PROVISION_RECEIPT], { cwd: worktree });
  }
  await git([...NO_AUTO_MAINTENANCE, ...NO_SUBMODULE_STATUS, "commit", "--quiet", "--no-verify", "--no-gpg-sign", "--allow-empty", "--file", "-"], {
    cwd: worktree,
    input: message,
    env: { ...HARNESS_IDENTITY },
  });
  return readHeadCommit(worktree) ?? git(["rev-parse", "HEAD"], { cwd: worktree, readOnly: true });
}
