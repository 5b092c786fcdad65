/**
 * The GitHub room: webhook triggers (validate, deduplicate, enqueue), slash-command parsing,
 * permission checks, pure renderers bounded to GitHub's limits, and the GitHub reporter.
 */
export { parseCommands, KNOWN_COMMANDS, MAX_COMMANDS, MAX_COMMENT_CHARS, type HarnessCommand, type KnownCommand, type ParseOptions } from "./commands.js";
export { handleIssueLabeled } from "./triggers/labeled.js";
export { handleIssueComment } from "./triggers/comment.js";
export { handleRetryAction } from "./triggers/requested-action.js";
export { DEFAULT_STORY_LABEL, type TriggerDeps, type TriggerEvent, type TriggerOutcome, type ReplyReason } from "./triggers/deps.js";
export { TRIGGER_HANDLERS, triggerOf, installationOctokit, doorEvent, type TriggerName, type AppAuth } from "./triggers/route.js";
export { canRunCommands, repositoryRole } from "./permissions.js";
export { BLOCKED_LABEL, addLabel, removeLabel, ensureLabel, hasLabel } from "./labels.js";
export { GitHubReporter, type GitHubReporterOptions } from "./reporter.js";
export { Outbox, OutboxStore, DEFAULT_RETRY_POLICY, retryVerdict, storyKeyOf, PUSH_SLOT, type PushWrite, type OutboxEntry, type OutboxOptions, type OutboxStory, type OutboxWrite, type RetryPolicy } from "./outbox/index.js";
export { storyGitHub, openStoryOutbox, outboxDir, HARNESS_CONFIG_PATH, startRefusal, StoryStartRefusedError, type StoryGitHub, type ReporterTarget, type AppOctokit, type PushWork, type CommitSignature, type StartBranch } from "./story/index.js";
export { readAppIdentity } from "./app-identity.js";
export { queueNoticeListeners, type QueueNoticeDeps } from "./queue-notices.js";
export { postNotices, commentNotice, announceNotices, type StoryNotice } from "./notices.js";
export { planChecks, CHECK_NAMES, RETRY_ACTION, stageCheckName, taskCheckName, isRetryCheckName, type CheckName, type PlannedCheck, type CheckStatus, type CheckConclusion } from "./check-plan.js";
export { storyBranch, storyIssueFromBranch, storyExternalId, findStoryPullRequest, isCompletedStory, type StoryPullRequest } from "./story-lookup.js";
export { redactSecrets, redactPem, REDACTED } from "./redact.js";
export { appSecretValues } from "./app-secrets.js";
export { withinBudget, HANDLER_BUDGET_MS } from "./answer-budget.js";
export { untilGitHubAnswers, githubDownDelay, GITHUB_DOWN_POLICY, type GitHubDownOptions, type Sleep } from "./github-down.js";
export { admitActor, confirmAdmission, isAllowedBot, isBotLogin, type Admission, type AdmissionPolicy } from "./admission.js";
export { guardWebhooks, signatureMatches, MAX_WEBHOOK_BYTES, SHED_RETRY_AFTER_SECONDS, type NodeMiddleware, type WebhookGuardOptions } from "./webhook-guard.js";
export { ClientSlots, clientKey, defaultMaxInflightPerClient, DEFAULT_CLIENT_SHARE } from "./door-clients.js";
export { drainVerifying } from "./shed-drain.js";
export { ShedLedger, DEFAULT_MAX_INFLIGHT, SHED_LOG_EVERY_MS, SHED_IDS_KEPT, SHED_IDS_LOGGED, type ShedClock, type ShedLedgerOptions } from "./door-shed.js";
export { singleLine, neutralise, untrustedLine, untrustedCell } from "./render/text.js";
export {
  boundMarkdown,
  boundCheckRunOutput,
  boundComment,
  truncateToBytes,
  truncateToChars,
  keepLastBytes,
  utf8Bytes,
  CHECK_RUN_OUTPUT_MAX_BYTES,
  COMMENT_MAX_CHARS,
  TRUNCATION_NOTE,
} from "./limits.js";
export { renderProvisionCheck } from "./render/provision.js";
export { renderVerifierCheck } from "./render/verifier.js";
export { renderCleanCloneCheck } from "./render/clean-clone.js";
export { renderStoryCheck } from "./render/story.js";
export { renderTaskCheck, wavesTable } from "./render/task.js";
export { renderPlannerCheck } from "./render/planner.js";
export { renderStatusComment, STATUS_MARKER } from "./render/status-comment.js";
export { renderPullTitle } from "./render/pull.js";
export { renderPushRefusedDetail } from "./render/push.js";
export { renderLowDisk, renderPushFailed, renderPushStillWaiting, renderSandboxUnavailable, renderTooManyInterruptions } from "./render/stops.js";
export { renderHelp, renderAlreadyCompleted, renderQuarantinedJob, renderWriteFailure, renderStoryStarted, renderStoryStopped } from "./render/replies.js";
export { adviceFor, RETRY_COMMAND } from "./render/advice.js";
export { failureClassTable, withFailureClassTable } from "./render/failure-table.js";
export type { CheckRunOutput, RenderOptions } from "./render/types.js";
export type { GitHubLog } from "./log.js";
export { RedeliverySweeper, toRedeliver, nextCursor, REDELIVER_WITHIN_MS, SWEEP_MAX_PAGES, ASKED_KEPT, type HookDelivery, type RedeliveryOptions, type SweepResult, type SweepState } from "./redelivery.js";
export { doorStatus, DOOR_IDS_SHOWN, DOOR_ID_CHARS, type DoorStatus } from "./door-status.js";
