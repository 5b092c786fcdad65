/**
 * What the App is doing, read from its data directory without disturbing it: queued and
 * running jobs, quarantined job files, and GitHub writes not delivered yet or given up. Used by
 * `harness status` and by the App's JSON endpoint, so an operator needs no log to see it.
 */
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { OutboxStore, storyKeyOf, type OutboxEntry } from "../outbox/index.js";
import {
  JobStore,
  liveHolder,
  listQuarantine,
  newLockOwner,
  quarantineDir,
  retireLockOwner,
  salvageStory,
  type JobRecord,
  type QueuedJobView,
  type StoryQueue,
} from "../queue/index.js";
import type { LocalWork, WorkerReport } from "./model/index.js";
import { storyKey } from "../story-key/index.js";

export interface JobView {
  jobId: string;
  story: string;
  kind: string;
  enqueuedAt: string;
  interruptions: number;
  startedAt?: string;
  /** The live process running it. */
  pid?: number;
  /** On Redis: the worker running it (its id in {@link HarnessStatus.workers}). */
  worker?: string;
}

/** A worker on Redis, as its last report described it. */
export interface WorkerView {
  worker: string;
  host: string;
  pid: number;
  home: string;
  /** False when it stopped renewing its report: killed, or stopped with work left on its disk. */
  live: boolean;
  /** ISO-8601 of its last report. */
  at: string;
  running: number;
  /** Entries its report left out (it keeps each list bounded). */
  omitted: { quarantined: number; undelivered: number };
}

export interface HarnessStatus {
  /** The App holding the data directory, if one runs. */
  app: { running: boolean; pid?: number };
  queued: JobView[];
  running: JobView[];
  /**
   * Job files set aside (on Redis, `worker` names the worker whose disk holds it), and on Redis
   * the jobs set aside in Redis itself (`reason` names the field that is wrong, `worker` the one that found it).
   */
  quarantined: Array<{ file: string; story?: string; worker?: string; reason?: string; inRedis?: true }>;
  /** On Redis: quarantined jobs in Redis beyond those listed. */
  quarantinedNotShown?: number;
  /** Writes waiting for GitHub (`pending`) or given up (`undeliverable`); on Redis, `worker` names whose outbox holds it. */
  undelivered: Array<{
    story: string;
    slot: string;
    kind: string;
    state: OutboxEntry["state"];
    attempts: number;
    nextAt?: string;
    lastError?: string;
    worker?: string;
  }>;
  /** With `HARNESS_QUEUE` (Redis): every worker's last report; queued and running jobs then come from Redis. */
  workers?: WorkerView[];
  /** Stories whose job is done with end reports still waiting in an outbox ({@link reportingStories}). */
  reporting: ReportingStory[];
}

/** A story reporting: its job ended, `writes` of its end reports still wait in the outbox (on Redis, `worker`'s). */
export interface ReportingStory {
  story: string;
  writes: number;
  worker?: string;
}

/** What only this data directory's disk holds: its quarantined job files and its outbox's undelivered writes. */
export async function collectLocalWork(harnessHome: string): Promise<LocalWork> {
  const quarantined: LocalWork["quarantined"] = [];
  for (const file of await listQuarantine(join(harnessHome, "queue"))) {
    const story = salvageStory(await readFile(join(quarantineDir(join(harnessHome, "queue")), file), "utf8").catch(() => ""));
    quarantined.push({ file, ...(story ? { story: storyKey(story.owner, story.repo, story.issueNumber) } : {}) });
  }
  const entries = await new OutboxStore(join(harnessHome, "outbox")).list();
  const undelivered: LocalWork["undelivered"] = [];
  for (const entry of entries) {
    if (entry.state === "delivered") continue;
    undelivered.push({
      story: storyKeyOf(entry.story),
      slot: entry.slot,
      kind: entry.write.kind,
      state: entry.state,
      attempts: entry.attempts,
      ...(entry.nextAt ? { nextAt: entry.nextAt } : {}),
      ...(entry.lastError ? { lastError: entry.lastError } : {}),
    });
  }
  return { quarantined, undelivered };
}

/**
 * The status of a queue whose workers share no disk (Redis): queued and running jobs from the
 * queue, each worker's quarantined files and undelivered writes from its report, and this data
 * directory's own when no worker reports it.
 */
async function collectSharedStatus(
  harnessHome: string,
  queue: StoryQueue & Required<Pick<StoryQueue, "workerReports">>,
  local: HarnessStatus,
): Promise<SharedStatus> {
  const [reports, views, inRedis] = await Promise.all([queue.workerReports(), queue.snapshot(), queue.quarantinedJobs?.() ?? { jobs: [], total: 0 }]);
  const runBy = new Map<string, string>();
  for (const report of reports) if (report.live) for (const jobId of report.running) runBy.set(jobId, report.worker);
  const view = (job: QueuedJobView): JobView => {
    const worker = runBy.get(job.jobId);
    return {
      jobId: job.jobId,
      story: job.job.storyKey,
      kind: job.job.kind,
      enqueuedAt: job.job.enqueuedAt,
      interruptions: job.interruptions,
      ...(job.startedAt ? { startedAt: job.startedAt } : {}),
      ...(job.state === "running" && worker ? { worker } : {}),
    };
  };
  const reported = reports.some((report) => report.home === harnessHome && report.host === hostname());
  const status = withReporting({
    app: local.app,
    queued: views.filter((job) => job.state === "queued").map(view),
    running: views.filter((job) => job.state === "running").map(view),
    quarantined: [
      ...inRedis.jobs.map((job) => ({
        file: job.entry,
        ...(job.story ? { story: job.story } : {}),
        worker: job.worker,
        reason: job.reason,
        inRedis: true as const,
      })),
      ...(reported ? [] : local.quarantined),
      ...reports.flatMap((report) => report.quarantined.map((entry) => ({ ...entry, worker: report.worker }))),
    ],
    ...(inRedis.total > inRedis.jobs.length ? { quarantinedNotShown: inRedis.total - inRedis.jobs.length } : {}),
    undelivered: [
      ...(reported ? [] : local.undelivered),
      ...reports.flatMap((report) => report.undelivered.map((entry) => ({ ...entry, worker: report.worker }))),
    ],
    workers: reports.map((report) => ({
      worker: report.worker,
      host: report.host,
      pid: report.pid,
      home: report.home,
      live: report.live,
      at: report.at,
      running: report.running.length,
      omitted: report.omitted,
    })),
  });
  return { status, reports, reportedHere: reported };
}

/** The status, and on Redis the workers' reports it was made from (the status page reads their runs). */
interface SharedStatus {
  status: HarnessStatus;
  reports: WorkerReport[];
  /** True when a worker's report covers this data directory (its disk is then read through the report only). */
  reportedHere: boolean;
}

/**
 * Reads the status of the data directory `harnessHome`; with a queue whose workers share no
 * disk (Redis), the status of the whole queue and every worker.
 */
export async function collectHarnessStatus(harnessHome: string, queue?: StoryQueue): Promise<HarnessStatus> {
  return (await collectStatusAndReports(harnessHome, queue)).status;
}

/** {@link collectHarnessStatus}, with the workers' reports (none without Redis). */
export async function collectStatusAndReports(harnessHome: string, queue?: StoryQueue): Promise<SharedStatus> {
  const self = newLockOwner();
  let local: HarnessStatus;
  try {
    const appHolder = await liveHolder(join(harnessHome, "harness.lock"), self);
    const store = new JobStore(join(harnessHome, "queue"));
    const queued: JobView[] = [];
    const running: JobView[] = [];
    for (const record of await store.list().catch(() => [] as JobRecord[])) {
      const holder = await liveHolder(store.lockPath(record.id), self);
      const view: JobView = {
        jobId: record.id,
        story: record.job.storyKey,
        kind: record.job.kind,
        enqueuedAt: record.job.enqueuedAt,
        interruptions: record.interruptions,
        ...(record.startedAt ? { startedAt: record.startedAt } : {}),
        ...(holder ? { pid: holder.pid } : {}),
      };
      (holder ? running : queued).push(view);
    }
    const work = await collectLocalWork(harnessHome);
    local = withReporting({ app: { running: appHolder !== undefined, ...(appHolder ? { pid: appHolder.pid } : {}) }, queued, running, ...work });
  } finally {
    retireLockOwner(self);
  }
  if (!queue?.workerReports) return { status: local, reports: [], reportedHere: false };
  return collectSharedStatus(harnessHome, queue as StoryQueue & Required<Pick<StoryQueue, "workerReports">>, local);
}

/**
 * The stories whose job ended with end reports still in an outbox (a job is done once its reports
 * are recorded there, not delivered): reporting, not lost. Pending writes of a running story are
 * its job's own; a story's given-up writes are listed as undelivered only. Pure.
 */
export function reportingStories(status: Pick<HarnessStatus, "running" | "undelivered">): ReportingStory[] {
  const running = new Set(status.running.map((job) => job.story));
  const found = new Map<string, ReportingStory>();
  for (const entry of status.undelivered) {
    if (entry.state !== "pending" || running.has(entry.story)) continue;
    const key = `${entry.story}\0${entry.worker ?? ""}`;
    const seen = found.get(key) ?? { story: entry.story, writes: 0, ...(entry.worker ? { worker: entry.worker } : {}) };
    seen.writes += 1;
    found.set(key, seen);
  }
  return [...found.values()];
}

/** The status with its stories reporting, derived from its running jobs and undelivered writes. */
function withReporting(status: Omit<HarnessStatus, "reporting">): HarnessStatus {
  return { ...status, reporting: reportingStories(status) };
}

/** The status as text for a terminal. Pure. */
export function renderStatusText(status: HarnessStatus): string {
  const lines = [status.app.running ? `App: running (pid ${status.app.pid ?? "?"})` : "App: not running"];
  const on = (worker: string | undefined): string => (worker ? `  on ${worker}` : "");
  if (status.workers) {
    lines.push("", `Workers (${status.workers.length}), reporting through Redis`);
    for (const worker of status.workers) {
      const omitted = worker.omitted.quarantined + worker.omitted.undelivered;
      lines.push(
        `  ${worker.worker}  ${worker.live ? "live" : "not live"} (report ${worker.at})  running ${worker.running}  home ${worker.home}${omitted > 0 ? `  ${omitted} entries not shown` : ""}`,
      );
    }
  }
  const jobs = (title: string, list: JobView[]): void => {
    lines.push("", `${title} (${list.length})`);
    for (const job of list)
      lines.push(
        `  ${job.story}  ${job.kind}  job ${job.jobId}${job.interruptions > 0 ? `  interrupted ${job.interruptions}×` : ""}${job.pid ? `  pid ${job.pid}` : ""}${on(job.worker)}`,
      );
  };
  jobs("Running", status.running);
  lines.push("", `Reporting (${status.reporting.length}): job done, end reports waiting in the outbox`);
  for (const story of status.reporting) lines.push(`  ${story.story}  ${story.writes} write(s) waiting${on(story.worker)}`);
  jobs("Queued", status.queued);
  const where = status.workers ? "in Redis or each worker's queue/quarantine/" : "in queue/quarantine/";
  lines.push("", `Quarantined jobs (${status.quarantined.length}${status.quarantinedNotShown ? ` shown, ${status.quarantinedNotShown} more` : ""}), ${where}`);
  for (const entry of status.quarantined) {
    lines.push(
      `  ${entry.inRedis ? "redis " : ""}${entry.file}${entry.story ? `  (${entry.story})` : ""}${on(entry.worker)}${entry.reason ? `  why: ${entry.reason}` : ""}`,
    );
  }
  lines.push("", `Undelivered GitHub writes (${status.undelivered.length})`);
  for (const entry of status.undelivered) {
    lines.push(
      `  ${entry.story}  ${entry.slot}  ${entry.state}  attempts ${entry.attempts}${entry.nextAt ? `  next ${entry.nextAt}` : ""}${entry.lastError ? `  last: ${entry.lastError}` : ""}${on(entry.worker)}`,
    );
  }
  return `${lines.join("\n")}\n`;
}
