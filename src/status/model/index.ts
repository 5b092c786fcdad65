/** The status page's model, shared with the queue that publishes each worker's part of it. */
export type { LocalWork, ReportedRun, WorkerReport } from "./local-work.js";
