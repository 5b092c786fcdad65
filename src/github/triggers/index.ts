/**
 * Commands and admission: the webhook triggers (a `story` label, a slash command, the Retry
 * button) that admit an actor, check permissions, re-admit a blocked story and enqueue its job.
 */
export { handleIssueLabeled } from "./labeled.js";
export { handleIssueComment } from "./comment.js";
export { handleRetryAction } from "./requested-action.js";
export { handlePullRequestReview } from "./review.js";
export { handleCheckSuite } from "./check-suite.js";
export { failureSignature, CI_LOG_TAIL_BYTES } from "./feedback.js";
export { DEFAULT_STORY_LABEL, type TriggerDeps, type TriggerEvent, type TriggerOutcome, type ReplyReason } from "./deps.js";
export { TRIGGER_HANDLERS, triggerOf, installationOctokit, doorEvent, type TriggerName, type AppAuth } from "./route.js";
export { canRunCommands, repositoryRole } from "./permissions.js";
export { admitActor, confirmAdmission, isAllowedBot, isBotLogin, type Admission, type AdmissionPolicy } from "./admission.js";
