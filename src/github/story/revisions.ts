/** What a revision round asks of GitHub: the rounds the status comment records, a note under them, and replies on review threads. */
import type { ProbotOctokit } from "probot";
import { parseRevisions, renderStatusNote, STATUS_MARKER, type RevisionRow } from "../report/render/index.js";

/** Where a story's pull request is. */
export interface PullPlace {
  owner: string;
  repo: string;
  pullNumber: number;
}

/** The status comment (the App's own; anyone can paste the marker into theirs) and the rounds it records. */
export async function readRounds(
  octokit: ProbotOctokit,
  where: PullPlace,
  botLogin?: string,
): Promise<{ rows: RevisionRow[]; commentId?: number; body?: string }> {
  const comments = await octokit.paginate(octokit.rest.issues.listComments, {
    owner: where.owner,
    repo: where.repo,
    issue_number: where.pullNumber,
    per_page: 100,
  });
  const own = comments.find(
    (comment) => (comment.body ?? "").startsWith(STATUS_MARKER) && (botLogin ? comment.user?.login === botLogin : comment.user?.type === "Bot"),
  );
  if (!own?.body) return { rows: [] };
  return { rows: parseRevisions(own.body), commentId: own.id, body: own.body };
}

/** Says `note` under the status comment's Revisions table (or in a comment of its own when the story has none). */
export async function noteUnderRounds(octokit: ProbotOctokit, where: PullPlace, recorded: Awaited<ReturnType<typeof readRounds>>, note: string): Promise<void> {
  if (recorded.commentId !== undefined && recorded.body !== undefined) {
    await octokit.rest.issues.updateComment({
      owner: where.owner,
      repo: where.repo,
      comment_id: recorded.commentId,
      body: renderStatusNote(recorded.body, recorded.rows, note),
    });
  } else {
    await octokit.rest.issues.createComment({ owner: where.owner, repo: where.repo, issue_number: where.pullNumber, body: note });
  }
}

/** Replies in the thread of review comment `commentId`. */
export async function replyOnThread(octokit: ProbotOctokit, where: PullPlace, commentId: number, body: string): Promise<void> {
  await octokit.rest.pulls.createReplyForReviewComment({ owner: where.owner, repo: where.repo, pull_number: where.pullNumber, comment_id: commentId, body });
}
