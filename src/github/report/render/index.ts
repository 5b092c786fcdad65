/** The pure renderers: check-run outputs, the status comment and replies, bounded to GitHub's limits. */
export { singleLine, neutralise, untrustedLine, untrustedCell } from "./text.js";
export { renderProvisionCheck } from "./provision.js";
export { currentVerification, gateFailed, renderVerifierCheck, stagePassed } from "./verifier.js";
export { cleanCloneEventPassed, currentCleanClone, renderCleanCloneCheck } from "./clean-clone.js";
export { renderStoryCheck } from "./story.js";
export { renderTaskCheck, wavesTable } from "./task.js";
export { plannerTask, renderPlannerCheck } from "./planner.js";
export { renderStatusComment, STATUS_MARKER } from "./status-comment.js";
export { renderPullBody, renderPullTitle } from "./pull.js";
export { renderPushRefusedCheck, renderPushRefusedDetail, renderPushWaitingCheck, PUSH_WAITING_WHY_MAX_BYTES, type WaitingPush } from "./push.js";
export { renderLowDisk, renderPushFailed, renderPushStillWaiting, renderSandboxUnavailable, renderTooManyInterruptions } from "./stops.js";
export {
  renderHelp,
  renderAlreadyActive,
  renderAlreadyCompleted,
  renderBlockedUseRetry,
  renderNotAdmitted,
  renderNotAStory,
  renderNotBlocked,
  renderNotPermitted,
  renderQuarantinedJob,
  renderReadmitted,
  renderStoryStarted,
  renderStoryStopped,
  renderUnknownCommand,
  renderWriteFailure,
  renderRevisionWaits,
  renderRevisionBatched,
  renderReviseNeedsText,
  renderRevisionNotPossible,
} from "./replies.js";
export { renderInterruptedCheck, renderMovedCheck } from "./check-notes.js";
export { adviceFor, RETRY_COMMAND } from "./advice.js";
export { failureClassTable, withFailureClassTable } from "./failure-table.js";
export type { CheckAnnotation, CheckRunOutput, RenderOptions, RevisionRow } from "./types.js";
export { parseRevisions, renderStatusNote, revisionsSection, REVISIONS_MARKER } from "./revisions.js";
export { currentIntegrity, integrityAnnotations, integritySection, renderIntegrityCheck, MAX_ANNOTATIONS } from "./integrity.js";
