/** `issues.labeled` with the story label: starts the story when the labeller may. */
import { BLOCKED_LABEL, hasLabel } from "../index.js";
import { renderAlreadyActive, renderBlockedUseRetry } from "../report/render/index.js";
import { buildJob, DEFAULT_STORY_LABEL, isBotActor, reply, scopeOf, type TriggerDeps, type TriggerEvent, type TriggerOutcome } from "./deps.js";

/**
 * Enqueues a `start` job for a newly labelled story, with the issue's title and body as the
 * labeller saw them (the payload's, at its `updated_at`). A bot's label counts only when the
 * operator allowlisted it; a person needs write access, asked of GitHub when the job starts.
 * A story already queued or running gets a reply; a redelivered or replayed
 * webhook gets nothing; a blocked story is pointed at the retry command. A completed story is
 * recognised by the runner, which replies with a link to its pull request.
 */
export async function handleIssueLabeled(context: TriggerEvent<"issues.labeled">, deps: TriggerDeps): Promise<TriggerOutcome> {
  const { payload } = context;
  const labelName = deps.labelName ?? DEFAULT_STORY_LABEL;
  if (payload.label?.name !== labelName) return { action: "ignored", reason: "other-label" };
  if (payload.issue.pull_request) return { action: "ignored", reason: "pull-request" };
  if (isBotActor(payload.sender, deps)) return { action: "ignored", reason: "bot" };
  const scope = scopeOf(context.octokit, context.id, payload.repository, payload.installation, deps);
  if (!scope) return { action: "ignored", reason: "no-installation" };
  const issue = payload.issue;
  scope.eventKey = `issues.labeled/${payload.repository.id}/${issue.number}/${payload.label.id}/${issue.updated_at}/${payload.sender.id}`;
  if (hasLabel(issue.labels, BLOCKED_LABEL)) {
    await reply(scope, issue.number, renderBlockedUseRetry(issue.number));
    return { action: "replied", reason: "blocked-use-retry" };
  }
  const sender = payload.sender;
  // No GitHub request before the answer: the labeller's permission, like whether the story
  // already completed, is the runner's first question (confirmAdmission), asked before it
  // clones anything; a labeller without write access gets the runner's reply and nothing runs.
  const job = buildJob(scope, "start", { number: issue.number, title: issue.title, body: issue.body, updatedAt: issue.updated_at }, sender.login, deps);
  const outcome = await deps.queue.enqueue(job);
  if (outcome.accepted) return { action: "enqueued", jobId: outcome.jobId, job };
  if (outcome.reason === "duplicate-delivery") return { action: "ignored", reason: "duplicate-delivery" };
  await reply(scope, issue.number, renderAlreadyActive(issue.number));
  return { action: "replied", reason: "already-active" };
}
