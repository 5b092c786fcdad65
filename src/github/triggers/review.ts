/** `pull_request_review.submitted` on a story's pull request: a writer's requested changes (or inline comments) start a revision. */
import { admissionPolicy, isBotActor, scopeOf, type TriggerDeps, type TriggerEvent, type TriggerOutcome } from "./deps.js";
import { admitActor } from "./admission.js";
import { freezeReview } from "./feedback.js";
import { enqueueRevision, storyOfPull } from "./revise.js";

/**
 * Queues a revision for a writer's review that asks for something: `changes_requested`, or
 * `commented` with inline comments (a bare comment review or an approval asks for nothing). A
 * review on a pull request that is not a story's, a closed one, or by a reader, a bot or the App
 * itself starts nothing. The body and every inline comment are read now and travel with the job.
 */
export async function handlePullRequestReview(context: TriggerEvent<"pull_request_review.submitted">, deps: TriggerDeps): Promise<TriggerOutcome> {
  const { payload } = context;
  const { review, pull_request: pull } = payload;
  const state = String(review.state).toLowerCase();
  if (state !== "changes_requested" && state !== "commented") return { action: "ignored", reason: "review-asks-nothing" };
  // A review whose author GitHub no longer has (a deleted account) counts as no person's, as a bot's does.
  const author = review.user;
  if (!author || isBotActor(author, deps) || isBotActor(payload.sender, deps)) return { action: "ignored", reason: "bot" };
  const storyNumber = storyOfPull(pull, payload.repository.id);
  if (storyNumber === undefined) return { action: "ignored", reason: "not-a-story" };
  if (pull.state !== "open") return { action: "ignored", reason: "pull-request-closed" };
  const scope = scopeOf(context.octokit, context.id, payload.repository, payload.installation, deps);
  if (!scope) return { action: "ignored", reason: "no-installation" };
  scope.eventKey = `pull_request_review/${review.id}`;
  const octokit = await scope.octokit();
  // A reader's review is their opinion, not an instruction to the App: it starts nothing and gets no reply.
  if ((await admitActor(octokit, scope.owner, scope.repo, author, admissionPolicy(deps))) !== "admitted") return { action: "ignored", reason: "not-permitted" };
  const frozen = await freezeReview(
    octokit,
    { owner: scope.owner, repo: scope.repo, pullNumber: pull.number },
    { id: review.id, by: author.login, body: review.body },
  );
  if (state === "commented" && frozen.comments.length === 0) return { action: "ignored", reason: "review-asks-nothing" };
  return enqueueRevision(scope, storyNumber, pull.number, { triggers: [frozen] }, author.login, deps);
}
