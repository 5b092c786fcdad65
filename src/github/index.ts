/**
 * GitHub access, the ground the GitHub rooms share: the limits GitHub puts on what it is sent,
 * labels, the story's branch and pull request lookups, redaction of secrets, and the log shape.
 * The rooms above it: `door/` (the webhook door), `triggers/` (commands and admission, with the
 * slash-command language in `commands/`), `report/` (reporting, with its pure `render/`) and
 * `story/` (the story adapter the runner uses, and the App's identity).
 */
export { BLOCKED_LABEL, addLabel, removeLabel, ensureLabel, hasLabel } from "./labels.js";
export {
  storyBranch,
  storyIssueFromBranch,
  storyIssueFromExternalId,
  storyExternalId,
  findStoryPullRequest,
  isCompletedStory,
  type StoryPullRequest,
} from "./story-lookup.js";
export { redactSecrets, redactPem, REDACTED } from "./redact.js";
export { errorDetails, hasStatus, type GitHubLog } from "./log.js";
export { markReadyForReview } from "./ready-for-review.js";
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
