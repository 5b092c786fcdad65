import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { syncDir, writeFileAtomic, type AtomicWriteOptions } from "../workspace/index.js";
import { schemas } from "../schema/index.js";
import type { StoryJob } from "./port.js";
import { quarantineFile, type QuarantinedJob } from "./quarantine.js";
import { JobFileWorker } from "./job-file-worker.js";

/** A job as kept on disk: one JSON file per job under `<queueDir>/jobs/`, removed when done. */
export interface JobRecord {
  id: string;
  job: StoryJob;
  /** `running` once a runner took it; a running record whose lock is dead was interrupted. */
  state: "queued" | "running";
  /** How many times a runner died while running it (kill -9, crash, power loss). */
  interruptions: number;
  startedAt?: string;
}

let counter = 0;

/** A job id that sorts in enqueue order and is unique across processes. */
export function newJobId(now = Date.now()): string {
  counter = (counter + 1) % 1_000_000;
  return `${String(now).padStart(15, "0")}-${String(counter).padStart(6, "0")}-${randomBytes(4).toString("hex")}`;
}

/** The job files of one queue folder. */
export class JobStore {
  readonly jobsDir: string;
  readonly locksDir: string;
  private writer: JobFileWorker | undefined;

  constructor(readonly queueDir: string) {
    this.jobsDir = join(queueDir, "jobs");
    this.locksDir = join(queueDir, "locks");
  }

  async init(): Promise<void> {
    await mkdir(this.jobsDir, { recursive: true });
    await mkdir(this.locksDir, { recursive: true });
    // Compiled at start-up, so the first webhook's enqueue does not pay for it.
    schemas().precompile("queue-job", "queue-lock");
    this.writer ??= JobFileWorker.start();
  }

  /** Flushes the background writes to stable storage and stops their thread. */
  async close(): Promise<void> {
    const writer = this.writer;
    this.writer = undefined;
    await writer?.close();
  }

  lockPath(id: string): string {
    return join(this.locksDir, `${id}.lock`);
  }

  /**
   * Writes a job file; `background` (the webhook's enqueue) answers once it is kill -9 safe,
   * written by the queue's writer thread, which flushes it to stable storage right after.
   */
  async write(record: JobRecord, flush: AtomicWriteOptions["flush"] = "now"): Promise<void> {
    schemas().validate<JobRecord>("queue-job", record, `queue/jobs/${record.id}.json`);
    const path = join(this.jobsDir, `${record.id}.json`);
    const text = `${JSON.stringify(record)}\n`;
    if (flush === "background" && this.writer) await this.writer.write(path, text);
    else await writeFileAtomic(path, text, { flush });
  }

  /**
   * Reads one job; undefined when it is gone (done). A file that is torn, empty (power loss),
   * not JSON or not a job (an unknown `kind`) throws {@link UnreadableJobError}.
   */
  async read(id: string): Promise<JobRecord | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.jobsDir, `${id}.json`), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const issues = parseIssues(text);
    if (issues !== undefined) throw new UnreadableJobError(id, `queue/jobs/${id}.json: ${issues}`);
    return JSON.parse(text) as JobRecord;
  }

  /** Moves an unreadable job file to `queue/quarantine/`. */
  quarantine(id: string, reason: string): Promise<QuarantinedJob | undefined> {
    return quarantineFile(this.queueDir, this.jobsDir, `${id}.json`, reason);
  }

  /** The ids of every job on disk, oldest first. Temp files of interrupted writes are skipped. */
  async ids(): Promise<string[]> {
    const names = (await readdir(this.jobsDir)).filter((name) => name.endsWith(".json") && !name.startsWith(".")).sort();
    return names.map((name) => name.slice(0, -".json".length));
  }

  /** Every readable job on disk, oldest first (unreadable ones are left for the queue to quarantine). */
  async list(): Promise<JobRecord[]> {
    const records: JobRecord[] = [];
    for (const id of await this.ids()) {
      const record = await this.read(id).catch((error: unknown) => {
        if (error instanceof UnreadableJobError) return undefined;
        throw error;
      });
      if (record) records.push(record);
    }
    return records;
  }

  async remove(id: string): Promise<void> {
    await rm(join(this.jobsDir, `${id}.json`), { force: true });
    await syncDir(this.jobsDir);
  }
}

/** A job file that cannot be read as a job. */
export class UnreadableJobError extends Error {
  constructor(readonly jobId: string, readonly reason: string) {
    super(`unreadable job file ${reason}`);
    this.name = "UnreadableJobError";
  }
}

/** Why a job file's text is not a job (torn, empty, not JSON, invalid); undefined when it is one. */
function parseIssues(text: string): string | undefined {
  if (text.trim() === "") return "empty";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  const issues = schemas().issues("queue-job", value);
  return issues.length === 0 ? undefined : issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
}
