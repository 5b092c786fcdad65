/** The operator's view of a data directory: `harness status` and the App's status endpoint. */
export { collectStatus, renderStatusText, type HarnessStatus, type JobView } from "./collect.js";
export { statusHandler, STATUS_PATH } from "./endpoint.js";
