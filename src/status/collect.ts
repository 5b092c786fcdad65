/**
 * What the App is doing, read from its data directory without disturbing it: queued and
 * running jobs, quarantined job files, and GitHub writes not delivered yet or given up. Used by
 * `harness status` and by the App's JSON endpoint, so an operator needs no log to see it.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { OutboxStore, type OutboxEntry } from "../github/index.js";
import { JobStore, liveHolder, listQuarantine, newLockOwner, quarantineDir, retireLockOwner, salvageStory, type JobRecord } from "../queue/index.js";

export interface JobView {
  jobId: string;
  story: string;
  kind: string;
  enqueuedAt: string;
  interruptions: number;
  startedAt?: string;
  /** The live process running it. */
  pid?: number;
}

export interface HarnessStatus {
  /** The App holding the data directory, if one runs. */
  app: { running: boolean; pid?: number };
  queued: JobView[];
  running: JobView[];
  quarantined: Array<{ file: string; story?: string }>;
  /** Writes waiting for GitHub (`pending`) or given up (`undeliverable`). */
  undelivered: Array<{ story: string; slot: string; kind: string; state: OutboxEntry["state"]; attempts: number; nextAt?: string; lastError?: string }>;
}

/** Reads the status of the data directory `harnessHome`. */
export async function collectHarnessStatus(harnessHome: string): Promise<HarnessStatus> {
  const self = newLockOwner();
  try {
    const appHolder = await liveHolder(join(harnessHome, "harness.lock"), self);
    const store = new JobStore(join(harnessHome, "queue"));
    const queued: JobView[] = [];
    const running: JobView[] = [];
    for (const record of await store.list().catch(() => [] as JobRecord[])) {
      const holder = await liveHolder(store.lockPath(record.id), self);
      const view: JobView = {
        jobId: record.id, story: record.job.storyKey, kind: record.job.kind, enqueuedAt: record.job.enqueuedAt, interruptions: record.interruptions,
        ...(record.startedAt ? { startedAt: record.startedAt } : {}), ...(holder ? { pid: holder.pid } : {}),
      };
      (holder ? running : queued).push(view);
    }
    const quarantined: HarnessStatus["quarantined"] = [];
    for (const file of await listQuarantine(join(harnessHome, "queue"))) {
      const story = salvageStory(await readFile(join(quarantineDir(join(harnessHome, "queue")), file), "utf8").catch(() => ""));
      quarantined.push({ file, ...(story ? { story: `${story.owner}/${story.repo}#${story.issueNumber}` } : {}) });
    }
    const entries = await new OutboxStore(join(harnessHome, "outbox")).list();
    const undelivered = entries
      .filter((entry) => entry.state !== "delivered")
      .map((entry) => ({
        story: `${entry.story.owner}/${entry.story.repo}#${entry.story.issueNumber}`, slot: entry.slot, kind: entry.write.kind, state: entry.state, attempts: entry.attempts,
        ...(entry.nextAt ? { nextAt: entry.nextAt } : {}), ...(entry.lastError ? { lastError: entry.lastError } : {}),
      }));
    return { app: { running: appHolder !== undefined, ...(appHolder ? { pid: appHolder.pid } : {}) }, queued, running, quarantined, undelivered };
  } finally {
    retireLockOwner(self);
  }
}

/** The status as text for a terminal. Pure. */
export function renderStatusText(status: HarnessStatus): string {
  const lines = [status.app.running ? `App: running (pid ${status.app.pid ?? "?"})` : "App: not running"];
  const jobs = (title: string, list: JobView[]): void => {
    lines.push("", `${title} (${list.length})`);
    for (const job of list) lines.push(`  ${job.story}  ${job.kind}  job ${job.jobId}${job.interruptions > 0 ? `  interrupted ${job.interruptions}×` : ""}${job.pid ? `  pid ${job.pid}` : ""}`);
  };
  jobs("Running", status.running);
  jobs("Queued", status.queued);
  lines.push("", `Quarantined job files (${status.quarantined.length}), in queue/quarantine/`);
  for (const entry of status.quarantined) lines.push(`  ${entry.file}${entry.story ? `  (${entry.story})` : ""}`);
  lines.push("", `Undelivered GitHub writes (${status.undelivered.length})`);
  for (const entry of status.undelivered) {
    lines.push(`  ${entry.story}  ${entry.slot}  ${entry.state}  attempts ${entry.attempts}${entry.nextAt ? `  next ${entry.nextAt}` : ""}${entry.lastError ? `  last: ${entry.lastError}` : ""}`);
  }
  return `${lines.join("\n")}\n`;
}
