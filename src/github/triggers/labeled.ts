/** `issues.labeled` with the story label: start the story, unless it is active, blocked or done. */
import type { Context } from "probot";
import { BLOCKED_LABEL, hasLabel } from "../labels.js";
import { renderAlreadyActive, renderBlockedUseRetry } from "../render/replies.js";
import { buildJob, DEFAULT_STORY_LABEL, reply, scopeOf, type TriggerDeps, type TriggerOutcome } from "./deps.js";

/**
 * Enqueues a `start` job for a newly labelled story. A story already queued or running gets
 * a reply; a redelivered webhook gets nothing; a blocked story is pointed at the retry command.
 * A completed story is recognised by the runner, which replies with a link to its pull request.
 */
export async function handleIssueLabeled(context: Context<"issues.labeled">, deps: TriggerDeps): Promise<TriggerOutcome> {
  const { payload } = context;
  const labelName = deps.labelName ?? DEFAULT_STORY_LABEL;
  if (payload.label?.name !== labelName) return { action: "ignored", reason: "other-label" };
  if (payload.issue.pull_request) return { action: "ignored", reason: "pull-request" };
  const scope = scopeOf(context.octokit, context.id, payload.repository, payload.installation, deps);
  if (!scope) return { action: "ignored", reason: "no-installation" };
  const issue = payload.issue;
  if (hasLabel(issue.labels, BLOCKED_LABEL)) {
    await reply(scope, issue.number, renderBlockedUseRetry(issue.number));
    return { action: "replied", reason: "blocked-use-retry" };
  }
  // No GitHub request before the answer: whether the story already completed is the runner's
  // first question, asked before it clones anything.
  const job = buildJob(scope, "start", issue, payload.sender.login, deps);
  const outcome = await deps.queue.enqueue(job);
  if (outcome.accepted) return { action: "enqueued", jobId: outcome.jobId, job };
  if (outcome.reason === "duplicate-delivery") return { action: "ignored", reason: "duplicate-delivery" };
  await reply(scope, issue.number, renderAlreadyActive(issue.number));
  return { action: "replied", reason: "already-active" };
}
