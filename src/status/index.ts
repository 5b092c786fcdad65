export { collectStatus, collectRuns, RECENT_RUNS, LIVE_TAIL_BYTES, type StatusReport, type RunStatus } from "./report.js";
export { renderStatusPage, escapeHtml, REFRESH_SECONDS, type PageOptions } from "./render-html.js";
export { statusHandler, webBaseFromEnv, authorized, STATUS_PATH, type StatusRouteOptions } from "./handler.js";
export {
  collectHarnessStatus,
  collectLocalWork,
  renderStatusText,
  reportingStories,
  type HarnessStatus,
  type JobView,
  type ReportingStory,
  type WorkerView,
} from "./collect.js";
export { liftCredentials, offeredToken, TOKEN_PARAM } from "./credentials.js";
export type { LocalWork, ReportedRun, WorkerReport } from "./model/index.js";
