/**
 * Reporting: the GitHub reporter (check runs, the status comment, labels, all through the
 * outbox), the plan of a story's check runs, and the notices posted on an issue.
 */
export { GitHubReporter, type GitHubReporterOptions } from "./reporter.js";
export { githubDelivery } from "./deliver.js";
export {
  planChecks,
  CHECK_NAMES,
  RETRY_ACTION,
  stageCheckName,
  taskCheckName,
  isRetryCheckName,
  type CheckName,
  type PlannedCheck,
  type CheckStatus,
  type CheckConclusion,
} from "./check-plan.js";
export { postNotices, commentNotice, announceNotices, type StoryNotice } from "./notices.js";
export { queueNoticeListeners, type QueueNoticeDeps } from "./queue-notices.js";
export * from "./render/index.js";
