/**
 * The queue's write-ahead log: one log per open queue (named for its process and instance, so
 * two queues never share one), each enqueue one appended record (answered once written, synced in the background),
 * the job's own file written only when a runner claims it, tombstones when a job is done or
 * quarantined. Every log in the folder is replayed; a log whose owner is dead is taken over
 * under the job-lock rules (its lock file), its queued jobs written as job files, and removed.
 *
 * Rules that keep a replay from reviving a finished job or losing a queued one:
 * - a job's file, once it exists, is the job: a record whose file exists is not replayed;
 * - a tombstone is durable before the job's file is removed (or quarantined);
 * - a segment is removed only when each of its jobs is tombstoned or has its file, after its
 *   tombstones still needed (their job's record lives in another segment) are appended again;
 * - any process may claim a logged job (under its lock, as a job file): a claim that finds no
 *   file reads the other logs first, and a takeover writes a job's file only under its lock,
 *   after reading them again, so a job finished elsewhere meanwhile is seen tombstoned.
 */
import { mkdir, open, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { syncDir } from "../../files/index.js";
import { acquireLock, newLockOwner, releaseLock, retireLockOwner, type LockOwner } from "../job-lock.js";
import { Appender } from "./appender.js";
import { decodeChunk, encodeEntry, encodeJobLine, type WalEntry } from "./record.js";

/** A segment rolls once it holds this much. */
export const DEFAULT_SEGMENT_BYTES = 4 * 1024 * 1024;

/** A job the log holds: its id and its record as appended (valid or not: the caller judges). */
export interface LoggedJob {
  id: string;
  value: unknown;
}

export interface WriteAheadLogOptions {
  /** `<queueDir>/wal`. */
  dir: string;
  /** `<queueDir>/locks`: a job's file is written by a takeover only under the job's lock. */
  locksDir: string;
  segmentBytes?: number;
  /** True when the job's own file exists. */
  hasFile: (id: string) => Promise<boolean>;
  /** Writes job files for these records, durably, before it resolves (a takeover, a close). */
  materialise: (jobs: LoggedJob[]) => Promise<void>;
}

interface Segment {
  log: string;
  number: number;
  mine: boolean;
  /** Bytes read so far (another process's segment is read as it grows). */
  offset: number;
  jobs: Set<string>;
  tombs: Set<string>;
}

/** A log's file: one of its segments (`<log>.<number, 6 digits>.log`) or its lock (`<log>.lock`). */
const LOG_FILE = /^([A-Za-z0-9]+-[A-Za-z0-9]+)\.(?:(\d{6})\.log|lock)$/;

export class WriteAheadLog {
  /** This log's name: `<pid>-<instance>`. */
  readonly name: string;
  private readonly owner: LockOwner = newLockOwner();
  private readonly segments = new Map<string, Segment>();
  private readonly jobs = new Map<string, { segment: string; value: unknown }>();
  private readonly tombs = new Map<string, Set<string>>();
  private readonly appender: Appender;
  private chain: Promise<void> = Promise.resolve();
  /** Logs of dead owners taken over and not yet removed (a job of theirs was locked by a live process). */
  private readonly adopted = new Set<string>();
  private closed = false;
  private closing: Promise<void> | undefined;
  private named: { number: number; name: string } | undefined;

  private constructor(private readonly options: WriteAheadLogOptions) {
    this.name = `${this.owner.pid}-${this.owner.instance}`;
    this.appender = new Appender((number) => join(options.dir, segmentName(this.name, number)), options.segmentBytes ?? DEFAULT_SEGMENT_BYTES, {
      opening: (number) =>
        this.segments.set(segmentName(this.name, number), { log: this.name, number, mine: true, offset: 0, jobs: new Set(), tombs: new Set() }),
      sealed: () => undefined,
    });
  }

  /** Opens this process's log in `dir` (creating the folder) and replays every log there. */
  static async open(options: WriteAheadLogOptions): Promise<WriteAheadLog> {
    await mkdir(options.dir, { recursive: true });
    const log = new WriteAheadLog(options);
    // A fresh owner: nobody else can hold this name.
    await acquireLock(log.lockPath(log.name), log.owner);
    await log.refresh();
    return log;
  }

  /** Appends a job's record (`json`: the JSON text of `value`); resolves once it is written (kill -9 safe; synced in the background). */
  async appendJob(id: string, json: string, value: unknown): Promise<void> {
    const segment = await this.appender.append(encodeJobLine(id, json));
    this.apply({ t: "job", id, r: value }, this.ownSegmentName(segment));
  }

  /** Appends a tombstone: the job is done or quarantined, never to be replayed. Resolves once durable. */
  async tombstone(id: string): Promise<void> {
    const entry: WalEntry = { t: "done", id };
    const segment = await this.appender.append(encodeEntry(entry), true);
    this.apply(entry, this.ownSegmentName(segment));
  }

  /** This log's segment's file name; the latest one's is kept, so the jobs logged in it share one string. */
  private ownSegmentName(number: number): string {
    if (this.named?.number !== number) this.named = { number, name: segmentName(this.name, number) };
    return this.named.name;
  }

  /** The ids of every logged job not tombstoned (its file may exist too: then the file is the job). */
  pendingIds(): string[] {
    return [...this.jobs.keys()].filter((id) => !this.settled(id));
  }

  /** A logged job's record when it is not tombstoned. */
  pending(id: string): unknown {
    return this.settled(id) ? undefined : this.jobs.get(id)?.value;
  }

  /** Reads what the other logs appended since the last look (a claim of a job no file holds). */
  catchUp(): Promise<void> {
    return this.serial(async () => {
      await this.readOthers();
    });
  }

  /**
   * Reads what the other logs appended since the last look, takes over the logs of dead
   * owners, and removes this log's sealed segments that hold nothing needed.
   */
  refresh(): Promise<void> {
    return this.serial(() => this.refreshNow());
  }

  private serial(work: () => Promise<void>): Promise<void> {
    const run = this.chain.then(work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Writes the files of this log's queued jobs, removes its segments (unless a tombstone in them
   * is still needed) and gives up its lock. A second call resolves with the first.
   */
  close(): Promise<void> {
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    this.closed = true;
    await this.chain;
    await this.appender.close();
    const mine = [...this.segments.entries()].filter(([, segment]) => segment.mine).map(([file]) => file);
    await this.retire(new Set(mine), false);
    await releaseLock(this.lockPath(this.name), this.owner);
    retireLockOwner(this.owner);
  }

  private async refreshNow(): Promise<void> {
    const logs = await this.readOthers();
    for (const log of logs) {
      if (this.closed) return;
      if (this.adopted.has(log) || (await acquireLock(this.lockPath(log), this.owner))) await this.takeOver(log);
    }
    await this.compact();
  }

  /** Reads the other logs' new lines; returns the names of the other logs in the folder. */
  private async readOthers(): Promise<Set<string>> {
    const names = await readdir(this.options.dir);
    const present = new Set(names);
    for (const [file, segment] of this.segments) if (!segment.mine && !present.has(file)) this.drop(file);
    const logs = new Set<string>();
    // Stryker disable next-line MethodExpression: node's readdir (libuv's scandir) lists names in strcmp order already, which is this order; the sort keeps the promise should that change
    for (const file of names.sort()) {
      const match = LOG_FILE.exec(file);
      if (!match?.[1] || match[1] === this.name) continue;
      logs.add(match[1]);
      if (match[2]) await this.readSegment(file, match[1], Number(match[2]));
    }
    return logs;
  }

  /** Reads the lines appended to another log's segment since the last look. */
  private async readSegment(file: string, log: string, number: number): Promise<void> {
    let segment = this.segments.get(file);
    if (!segment) {
      segment = { log, number, mine: false, offset: 0, jobs: new Set(), tombs: new Set() };
      this.segments.set(file, segment);
    }
    let handle;
    try {
      handle = await open(join(this.options.dir, file), "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      this.drop(file);
      return;
    }
    try {
      const { size } = await handle.stat();
      // Stryker disable next-line EqualityOperator: at equal sizes the read below asks for no bytes, and a read of none returns none
      if (size <= segment.offset) return;
      // Stryker disable next-line ArithmeticOperator: a read stops at the end of the file, so a larger buffer holds the same bytes (only bytesRead of it are decoded)
      const chunk = Buffer.alloc(size - segment.offset);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, segment.offset);
      const decoded = decodeChunk(chunk.subarray(0, bytesRead));
      segment.offset += decoded.consumed;
      for (const entry of decoded.entries) this.apply(entry, file);
    } finally {
      await handle.close();
    }
  }

  /** A dead owner's log, now locked by this one: its queued jobs become job files, then it goes. */
  private async takeOver(log: string): Promise<void> {
    this.adopted.add(log);
    const files = [...this.segments.entries()].filter(([, segment]) => segment.log === log).map(([file]) => file);
    if (!(await this.retire(new Set(files), true))) return;
    this.adopted.delete(log);
    await releaseLock(this.lockPath(log), this.owner);
  }

  /**
   * Removes `files` (segments of this log, or of a log taken over): first the files of their
   * jobs that have none, then the tombstones still needed appended again (`carry`; at close
   * there is no log left to carry them to, and those segments stay). False when a segment
   * stayed because a live process holds the lock of one of its jobs.
   */
  private async retire(files: Set<string>, carry: boolean): Promise<boolean> {
    const unwritten: { job: LoggedJob; file: string }[] = [];
    for (const [file, segment] of this.segments) {
      if (!files.has(file)) continue;
      for (const id of segment.jobs) {
        const job = this.jobs.get(id);
        if (job?.segment === file && !this.settled(id) && !(await this.options.hasFile(id))) unwritten.push({ job: { id, value: job.value }, file });
      }
    }
    // The jobs whose locks this log holds while it writes their files.
    const writable: LoggedJob[] = [];
    let whole = true;
    try {
      for (const { job, file } of unwritten) {
        if (await acquireLock(this.jobLock(job.id), this.owner)) {
          writable.push(job);
        } else {
          // A live process is claiming it (and writes its file): this segment waits for the next look.
          files.delete(file);
          whole = false;
        }
      }
      if (writable.length > 0) {
        // Under the jobs' locks, the other logs read again: a job finished elsewhere is tombstoned by now.
        await this.readOthers();
        const still: LoggedJob[] = [];
        for (const job of writable) if (!this.settled(job.id) && !(await this.options.hasFile(job.id))) still.push(job);
        if (still.length > 0) await this.options.materialise(still);
      }
    } finally {
      for (const job of writable) await releaseLock(this.jobLock(job.id), this.owner);
    }
    await this.removeSegments(files, carry);
    return whole;
  }

  /** This log's sealed segments whose every job is tombstoned or has its file: removed. */
  private async compact(): Promise<void> {
    const latest = segmentName(this.name, this.appender.latest);
    // Oldest first: this log's segments enter the map in the order they are opened.
    const sealed = [...this.segments.entries()].filter(([file, segment]) => segment.mine && file < latest);
    for (const [file, segment] of sealed) {
      if (this.closed) return;
      if (await this.allWritten(segment)) await this.removeSegments(new Set([file]), true);
    }
  }

  /** True when each job of the segment is tombstoned or has its file; stops at the first that is neither (a backlog costs one look per segment). */
  private async allWritten(segment: Segment): Promise<boolean> {
    for (const id of segment.jobs) if (!this.settled(id) && !(await this.options.hasFile(id))) return false;
    return true;
  }

  /**
   * Removes `files`, after appending again the tombstones in them still needed (their job's
   * record lives in a segment that stays); without `carry` (at close) the segments holding
   * such a tombstone stay instead.
   */
  private async removeSegments(files: Set<string>, carry: boolean): Promise<void> {
    const needed = new Set<string>();
    /** The segments that hold a needed tombstone. */
    const holding = new Set<string>();
    for (const file of files) {
      const segment = this.segments.get(file);
      // Forgotten already: a segment of a log taken over, removed meanwhile (by hand).
      if (!segment) continue;
      for (const id of segment.tombs) {
        const job = this.jobs.get(id);
        // A segment's tombstone is in `tombs` under its id until the segment is dropped.
        const elsewhere = [...this.tombs.get(id)!].some((tomb) => !files.has(tomb));
        if (job && !files.has(job.segment) && !elsewhere) {
          needed.add(id);
          holding.add(file);
        }
      }
    }
    if (carry) {
      await Promise.all([...needed].map((id) => this.tombstone(id)));
    } else {
      // Only at close: the segments holding a needed tombstone stay, for whoever takes this log over.
      for (const file of holding) files.delete(file);
    }
    for (const file of files) {
      await rm(join(this.options.dir, file), { force: true });
      this.drop(file);
    }
    await syncDir(this.options.dir);
  }

  private apply(entry: WalEntry, file: string): void {
    const segment = this.segments.get(file);
    if (!segment) return;
    if (entry.t === "job") {
      this.jobs.set(entry.id, { segment: file, value: entry.r });
      segment.jobs.add(entry.id);
      return;
    }
    let tombs = this.tombs.get(entry.id);
    if (!tombs) this.tombs.set(entry.id, (tombs = new Set()));
    tombs.add(file);
    segment.tombs.add(entry.id);
  }

  /** Forgets a removed segment. */
  private drop(file: string): void {
    const segment = this.segments.get(file);
    if (!segment) return;
    for (const id of segment.jobs) if (this.jobs.get(id)?.segment === file) this.jobs.delete(id);
    for (const id of segment.tombs) {
      // Put there with the segment's tombstone (apply), removed only once no segment holds one.
      const tombs = this.tombs.get(id)!;
      tombs.delete(file);
      if (tombs.size === 0) this.tombs.delete(id);
    }
    this.segments.delete(file);
  }

  private settled(id: string): boolean {
    return this.tombs.has(id);
  }

  private jobLock(id: string): string {
    return join(this.options.locksDir, `${id}.lock`);
  }

  private lockPath(log: string): string {
    return join(this.options.dir, `${log}.lock`);
  }
}

function segmentName(log: string, number: number): string {
  return `${log}.${String(number).padStart(6, "0")}.log`;
}
