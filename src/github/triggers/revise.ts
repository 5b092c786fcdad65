/**
 * Enqueuing a revision: the triggers after the pull request (a writer's review, `/harness
 * revise`, another App's failing suite) all end here, with their feedback frozen into the job.
 * Whether a round may start (`iterate`, `iterate.max_rounds`) is the runner's question, asked when
 * the job starts with the repository's configuration in hand.
 */
import type { ProbotOctokit } from "probot";
import type { RevisionRequest } from "../../queue/index.js";
import { storyIssueFromBranch } from "../index.js";
import { renderRevisionBatched, renderRevisionWaits } from "../report/render/index.js";
import { buildJob, reply, type TriggerDeps, type TriggerOutcome, type TriggerScope } from "./deps.js";
import { loadStoryIssue } from "./readmit.js";

/** A pull request as the triggers need it: its number, head and state. */
export interface PullHead {
  number: number;
  state: string;
  head: { ref: string; sha: string; repo?: { id: number } | null };
}

/** The story issue a pull request belongs to: only the repository's own `harness/story-<N>` branch (a fork can name its branch so too). */
export function storyOfPull(pull: Pick<PullHead, "head">, repositoryId: number): number | undefined {
  return pull.head.repo?.id === repositoryId ? storyIssueFromBranch(pull.head.ref) : undefined;
}

/** Reads a pull request's current head and state. */
export async function currentPull(octokit: ProbotOctokit, scope: TriggerScope, pullNumber: number): Promise<PullHead> {
  const { data } = await octokit.rest.pulls.get({ owner: scope.owner, repo: scope.repo, pull_number: pullNumber });
  return { number: data.number, state: data.state, head: { ref: data.head.ref, sha: data.head.sha, repo: data.head.repo } };
}

/**
 * Queues a `revise` job of story `storyNumber` with `revision`, frozen. While a run of the story
 * is queued or running the queue batches it into the story's next round (one run at a time per
 * story), and the pull request is told so; a queue that cannot batch refuses, and that is told too.
 */
export async function enqueueRevision(
  scope: TriggerScope,
  storyNumber: number,
  pullNumber: number,
  revision: RevisionRequest,
  requestedBy: string,
  deps: TriggerDeps,
): Promise<TriggerOutcome> {
  const issue = await loadStoryIssue(scope, storyNumber);
  const job = { ...buildJob(scope, "revise", issue, requestedBy, deps, pullNumber), revision };
  const outcome = await deps.queue.enqueue(job);
  if (outcome.accepted && outcome.batched) await reply(scope, pullNumber, renderRevisionBatched(storyNumber));
  if (outcome.accepted) return { action: "enqueued", jobId: outcome.jobId, job };
  if (outcome.reason === "duplicate-delivery") return { action: "ignored", reason: "duplicate-delivery" };
  await reply(scope, pullNumber, renderRevisionWaits(storyNumber));
  return { action: "replied", reason: "already-active" };
}
