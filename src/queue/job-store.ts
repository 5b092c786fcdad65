import { access, mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { syncDir, writeFileAtomic, type AtomicWriteOptions } from "../files/index.js";
import { schemas } from "../schema/index.js";
import type { StoryJob } from "./port.js";
import { quarantineFile, type QuarantinedJob } from "./quarantine.js";
import { JobFileWorker, type ReadResult } from "./job-file-worker.js";
import { WriteAheadLog, type LoggedJob } from "./wal/index.js";

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
/**
 * This process's part of every job id, drawn once: with the time and the counter it keeps ids
 * unique across processes, without asking the system's random source once per webhook (a
 * synchronous call that cost the webhook path more than the rest of the id).
 */
const processPart = randomBytes(4).toString("hex");

/** Job files read per message to the worker: a webhook's write waits behind one chunk at most. */
const READ_CHUNK = 500;
/** Chunks asked of the worker ahead of the one being parsed. */
const READS_IN_FLIGHT = 3;

/** A job id that sorts in enqueue order and is unique across processes. */
export function newJobId(now = Date.now()): string {
  counter = (counter + 1) % 1_000_000;
  return `${String(now).padStart(15, "0")}-${String(counter).padStart(6, "0")}-${processPart}`;
}

/** With a write-ahead log (`queue/wal/`): an enqueue is one appended record, its job file written when a runner claims it. */
export interface JobStoreOptions {
  writeAheadLog?: boolean;
  /** A log's segment rolls at this size (tests). */
  walSegmentBytes?: number;
}

/** The job files of one queue folder. */
export class JobStore {
  readonly jobsDir: string;
  readonly locksDir: string;
  private writer: JobFileWorker | undefined;
  private wal: WriteAheadLog | undefined;

  constructor(
    readonly queueDir: string,
    private readonly options: JobStoreOptions = {},
  ) {
    this.jobsDir = join(queueDir, "jobs");
    this.locksDir = join(queueDir, "locks");
  }

  async init(): Promise<void> {
    await mkdir(this.jobsDir, { recursive: true });
    await mkdir(this.locksDir, { recursive: true });
    // Compiled at start-up, so the first webhook's enqueue does not pay for it.
    schemas().precompile("queue-job", "queue-lock");
    this.writer ??= JobFileWorker.start();
    const walDir = join(this.queueDir, "wal");
    // A folder with logs is read with them, whoever opens it: their jobs are this folder's jobs too.
    if ((this.options.writeAheadLog || existsSync(walDir)) && !this.wal) {
      this.wal = await WriteAheadLog.open({
        dir: walDir,
        locksDir: this.locksDir,
        ...(this.options.walSegmentBytes ? { segmentBytes: this.options.walSegmentBytes } : {}),
        hasFile: (id) =>
          access(this.jobPath(id)).then(
            () => true,
            () => false,
          ),
        materialise: (jobs) => this.materialise(jobs),
      });
    }
  }

  /** Flushes the background writes to stable storage and stops their thread. */
  async close(): Promise<void> {
    const wal = this.wal;
    this.wal = undefined;
    // First: the log writes its queued jobs' files through the writer.
    await wal?.close();
    const writer = this.writer;
    this.writer = undefined;
    await writer?.close();
  }

  private jobPath(id: string): string {
    return join(this.jobsDir, `${id}.json`);
  }

  /** Job files for records of a log (taken over, or closing), written and flushed before it resolves. */
  private async materialise(jobs: LoggedJob[]): Promise<void> {
    const writes = jobs.map(({ id, value }) => {
      const text = `${JSON.stringify(value)}\n`;
      return this.writer ? this.writer.write(this.jobPath(id), text) : writeFileAtomic(this.jobPath(id), text);
    });
    await Promise.all(writes);
    await this.writer?.flush();
  }

  lockPath(id: string): string {
    return join(this.locksDir, `${id}.lock`);
  }

  /**
   * Writes a job file; `background` (the webhook's enqueue) answers once it is kill -9 safe,
   * written by the queue's writer thread, which flushes it to stable storage right after.
   */
  async write(record: JobRecord, flush?: AtomicWriteOptions["flush"]): Promise<void> {
    schemas().validate<JobRecord>("queue-job", record, `queue/jobs/${record.id}.json`);
    const json = JSON.stringify(record);
    // With the log, the enqueue's record is appended (kill -9 safe once answered, synced right after); the file waits for a runner.
    if (flush === "background" && this.wal) return this.wal.appendJob(record.id, json, record);
    const path = this.jobPath(record.id);
    const text = `${json}\n`;
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
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // Only logged: another process may have run it from its file meanwhile (its tombstone tells).
      await this.wal?.catchUp();
      return this.logged(id);
    }
    const parsed = parseJob(id, text);
    if ("unreadable" in parsed) throw parsed.unreadable;
    return parsed.record;
  }

  /**
   * Reads many jobs at once (a restart, a rescan): the files are read by the queue's worker
   * thread in chunks, parsed and validated here. Per id: the record, gone (done meanwhile),
   * or an {@link UnreadableJobError} for the caller to quarantine. Other read errors throw.
   */
  async readMany(ids: readonly string[]): Promise<Map<string, JobRecord | UnreadableJobError | undefined>> {
    const results = new Map<string, JobRecord | UnreadableJobError | undefined>();
    const chunks: string[][] = [];
    const rest = [...ids];
    while (rest.length > 0) chunks.push(rest.splice(0, READ_CHUNK));
    const readChunk = (chunk: string[]): Promise<ReadResult[]> =>
      this.writer
        ? this.writer.read(chunk.map((id) => join(this.jobsDir, `${id}.json`)))
        : Promise.all(
            chunk.map((id) =>
              readFile(join(this.jobsDir, `${id}.json`), "utf8").then(
                (text) => ({ text }),
                (error: NodeJS.ErrnoException) => ({ code: String(error.code), message: error.message }),
              ),
            ),
          );
    // A few chunks in flight: the worker reads the next ones while this thread parses one.
    const inFlight = chunks.slice(0, READS_IN_FLIGHT).map(readChunk);
    for (const [number, chunk] of chunks.entries()) {
      const files = await (inFlight[number] as Promise<ReadResult[]>);
      const next = chunks[number + READS_IN_FLIGHT];
      if (next) inFlight.push(readChunk(next));
      for (const [index, id] of chunk.entries()) {
        // One answer per path, in order (the worker maps the paths; so does the fallback).
        const file = files[index] as ReadResult;
        if ("code" in file) {
          if (file.code === "ENOENT") {
            results.set(id, this.logged(id));
            continue;
          }
          throw Object.assign(new Error(`reading queue/jobs/${id}.json: ${file.message}`), { code: file.code });
        }
        const parsed = parseJob(id, file.text);
        results.set(id, "unreadable" in parsed ? parsed.unreadable : parsed.record);
      }
    }
    return results;
  }

  /** Moves an unreadable job file to `queue/quarantine/`. */
  async quarantine(id: string, reason: string): Promise<QuarantinedJob | undefined> {
    // Tombstoned first: once the file is moved, a replay of the log must not bring the job back.
    await this.wal?.tombstone(id);
    return quarantineFile(this.queueDir, this.jobsDir, `${id}.json`, reason);
  }

  /** The ids of every job on disk, oldest first. Temp files of interrupted writes are skipped. */
  async ids(): Promise<string[]> {
    const names = (await readdir(this.jobsDir)).filter((name) => name.endsWith(".json") && !name.startsWith("."));
    // Stryker disable next-line MethodExpression: node's readdir (libuv's scandir) lists names in strcmp order already, which is this order; the sort keeps the promise should that change
    names.sort();
    const ids = names.map((name) => name.slice(0, -".json".length));
    if (!this.wal) return ids;
    await this.wal.refresh();
    return [...new Set([...ids, ...this.wal.pendingIds()])].sort();
  }

  /** Every readable job on disk, oldest first (unreadable ones are left for the queue to quarantine). */
  async list(): Promise<JobRecord[]> {
    const records: JobRecord[] = [];
    for (const value of (await this.readMany(await this.ids())).values()) if (value && !(value instanceof UnreadableJobError)) records.push(value);
    return records;
  }

  /**
   * A job the log holds and no file does yet, when its record is a valid job. An invalid one
   * (another process's) waits for its log's takeover: written as a file, it is quarantined.
   */
  private logged(id: string): JobRecord | undefined {
    const value = this.wal?.pending(id);
    return value !== undefined && schemas().issues("queue-job", value).length === 0 ? (value as JobRecord) : undefined;
  }

  async remove(id: string): Promise<void> {
    // Tombstoned first: a replay of the log must never bring a finished job back.
    await this.wal?.tombstone(id);
    await rm(join(this.jobsDir, `${id}.json`), { force: true });
    await syncDir(this.jobsDir);
  }
}

/** A job file that cannot be read as a job. */
export class UnreadableJobError extends Error {
  constructor(
    readonly jobId: string,
    readonly reason: string,
  ) {
    super(`unreadable job file ${reason}`);
    this.name = "UnreadableJobError";
  }
}

/** A job file's text as a record, or why it is not one (torn, empty, not JSON, invalid). */
function parseJob(id: string, text: string): { record: JobRecord } | { unreadable: UnreadableJobError } {
  const unreadable = (issues: string): { unreadable: UnreadableJobError } => ({ unreadable: new UnreadableJobError(id, `queue/jobs/${id}.json: ${issues}`) });
  if (text.trim() === "") return unreadable("empty");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // JSON.parse of a string throws only a SyntaxError.
    return unreadable(`not JSON (${(error as SyntaxError).message})`);
  }
  const issues = schemas().issues("queue-job", value);
  return issues.length === 0 ? { record: value as JobRecord } : unreadable(issues.map((issue) => `${issue.path}: ${issue.message}`).join("; "));
}
