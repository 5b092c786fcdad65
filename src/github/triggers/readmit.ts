/** Re-admitting a blocked story: shared by `/harness retry-blocked` and the Retry button. */
import { storyKey } from "../../story-key/index.js";
import { BLOCKED_LABEL, hasLabel } from "../index.js";
import { renderAlreadyActive, renderNotBlocked, renderReadmitted } from "../report/render/index.js";
import { errorDetails } from "../index.js";
import { buildJob, reply, type TriggerDeps, type TriggerOutcome, type TriggerScope } from "./deps.js";

export interface StoryIssue {
  number: number;
  title: string;
  body: string | null | undefined;
  /** The issue's `updated_at`: the revision of the text being admitted. */
  updatedAt?: string | null;
  labels?: ReadonlyArray<{ name?: string } | string>;
}

/** Loads the story issue (title, body, labels) when the trigger came from its pull request. */
export async function loadStoryIssue(scope: TriggerScope, issueNumber: number): Promise<StoryIssue> {
  const { data } = await (await scope.octokit()).rest.issues.get({ owner: scope.owner, repo: scope.repo, issue_number: issueNumber });
  return { number: data.number, title: data.title, body: data.body, updatedAt: data.updated_at, labels: data.labels };
}

/**
 * Enqueues a `retry-blocked` job when the story carries `harness:blocked`; otherwise replies
 * on `replyTo` why nothing happens. Permission must have been checked by the caller. With
 * `acceptIntegrity` (`/harness accept-integrity`) the re-admitted run accepts the test-integrity
 * gate's findings in `requestedBy`'s name.
 */
export async function readmitBlockedStory(
  scope: TriggerScope,
  issue: StoryIssue,
  pullNumber: number | undefined,
  replyTo: number,
  requestedBy: string,
  deps: TriggerDeps,
  acceptIntegrity = false,
): Promise<TriggerOutcome> {
  if (!hasLabel(issue.labels, BLOCKED_LABEL)) {
    const active = await deps.queue.isActive(storyKey(scope.owner, scope.repo, issue.number));
    await reply(scope, replyTo, renderNotBlocked(issue.number, active));
    return { action: "replied", reason: active ? "already-active" : "not-blocked" };
  }
  const job = buildJob(scope, "retry-blocked", issue, requestedBy, deps, pullNumber, acceptIntegrity);
  const outcome = await deps.queue.enqueue(job);
  if (!outcome.accepted) {
    if (outcome.reason === "duplicate-delivery") return { action: "ignored", reason: "duplicate-delivery" };
    await reply(scope, replyTo, renderAlreadyActive(issue.number));
    return { action: "replied", reason: "already-active" };
  }
  // The job is queued; a failed acknowledgement must not look like a failed retry.
  try {
    await reply(scope, replyTo, renderReadmitted(issue.number, acceptIntegrity ? requestedBy : undefined));
  } catch (error) {
    deps.log.warn({ err: errorDetails(error), storyKey: job.storyKey }, "could not acknowledge the re-admission");
  }
  return { action: "enqueued", jobId: outcome.jobId, job };
}
