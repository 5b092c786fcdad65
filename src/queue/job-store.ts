import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { syncDir, writeFileAtomic, type AtomicWriteOptions } from "../workspace/index.js";
import { schemas } from "../schema/index.js";
import type { StoryJob } from "./port.js";

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

  constructor(readonly queueDir: string) {
    this.jobsDir = join(queueDir, "jobs");
    this.locksDir = join(queueDir, "locks");
  }

  async init(): Promise<void> {
    await mkdir(this.jobsDir, { recursive: true });
    await mkdir(this.locksDir, { recursive: true });
    // Compiled at start-up, so the first webhook's enqueue does not pay for it.
    schemas().precompile("queue-job", "queue-lock");
  }

  lockPath(id: string): string {
    return join(this.locksDir, `${id}.lock`);
  }

  /** Writes a job file; `background` answers once it is kill -9 safe and flushes right after. */
  async write(record: JobRecord, flush: AtomicWriteOptions["flush"] = "now"): Promise<void> {
    schemas().validate<JobRecord>("queue-job", record, `queue/jobs/${record.id}.json`);
    await writeFileAtomic(join(this.jobsDir, `${record.id}.json`), `${JSON.stringify(record)}\n`, { flush });
  }

  /** Reads one job; undefined when it is gone (done) or unreadable. */
  async read(id: string): Promise<JobRecord | undefined> {
    try {
      return parseRecord(await readFile(join(this.jobsDir, `${id}.json`), "utf8"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  /** The ids of every job on disk, oldest first. Temp files of interrupted writes are skipped. */
  async ids(): Promise<string[]> {
    const names = (await readdir(this.jobsDir)).filter((name) => name.endsWith(".json") && !name.startsWith(".")).sort();
    return names.map((name) => name.slice(0, -".json".length));
  }

  /** Every job on disk, oldest first. */
  async list(): Promise<JobRecord[]> {
    const records: JobRecord[] = [];
    for (const id of await this.ids()) {
      const record = await this.read(id);
      if (record) records.push(record);
    }
    return records;
  }

  async remove(id: string): Promise<void> {
    await rm(join(this.jobsDir, `${id}.json`), { force: true });
    await syncDir(this.jobsDir);
  }
}

/** A job file's record; undefined for a file that is torn, empty (power loss) or not a job. */
function parseRecord(text: string): JobRecord | undefined {
  return schemas().parseValid<JobRecord>("queue-job", text);
}
