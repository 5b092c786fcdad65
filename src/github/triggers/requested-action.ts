/** `check_run.requested_action`: the Retry button on a blocked story's `harness / story` check run. */
import { isRetryCheckName, RETRY_ACTION } from "../report/index.js";
import { admitActor } from "./admission.js";
import { renderNotPermitted } from "../report/render/index.js";
import { storyIssueFromBranch, storyIssueFromExternalId } from "../index.js";
import { admissionPolicy, isBotActor, reply, scopeOf, type TriggerDeps, type TriggerEvent, type TriggerOutcome } from "./deps.js";
import { loadStoryIssue, readmitBlockedStory } from "./readmit.js";

/** Does what `/harness retry-blocked` does, with the same permission check on the person who pressed Retry. */
export async function handleRetryAction(context: TriggerEvent<"check_run.requested_action">, deps: TriggerDeps): Promise<TriggerOutcome> {
  const { payload } = context;
  const checkRun = payload.check_run;
  if (payload.requested_action?.identifier !== RETRY_ACTION.identifier) return { action: "ignored", reason: "other-action" };
  if (!isRetryCheckName(checkRun.name)) return { action: "ignored", reason: "other-check-run" };
  if (deps.appId !== undefined && checkRun.app?.id !== deps.appId) return { action: "ignored", reason: "other-app" };
  if (isBotActor(payload.sender, deps)) return { action: "ignored", reason: "bot" };
  const scope = scopeOf(context.octokit, context.id, payload.repository, payload.installation, deps);
  if (!scope) return { action: "ignored", reason: "no-installation" };
  // The reporter writes the story into external_id; the pull request list and branch are fallbacks.
  let storyNumber = storyIssueFromExternalId(checkRun.external_id);
  const pullNumber = checkRun.pull_requests[0]?.number;
  // Stryker disable next-line StringLiteral: any text that is not `harness/story-<n>` names no story, like an absent branch
  if (storyNumber === undefined) storyNumber = storyIssueFromBranch(checkRun.check_suite?.head_branch ?? "");
  if (storyNumber === undefined) return { action: "ignored", reason: "not-a-story" };
  const login = payload.sender.login;
  scope.eventKey = `check_run.requested_action/${checkRun.id}/${payload.sender.id}`;
  if ((await admitActor(await scope.octokit(), scope.owner, scope.repo, payload.sender, admissionPolicy(deps))) !== "admitted") {
    await reply(scope, pullNumber ?? storyNumber, renderNotPermitted(login));
    return { action: "replied", reason: "not-permitted" };
  }
  const replyTo = pullNumber ?? storyNumber;
  const issue = await loadStoryIssue(scope, storyNumber);
  return readmitBlockedStory(scope, issue, pullNumber, replyTo, login, deps);
}
