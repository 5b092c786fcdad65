import { join } from "node:path";
import { flushPendingWrites } from "../files/index.js";
import { DeliveryLog } from "./delivery-log.js";
import { acquireLock, liveHolder, newLockOwner, releaseLock, retireLockOwner, type LockOwner } from "./job-lock.js";
import { JobStore, newJobId, UnreadableJobError, type JobRecord } from "./job-store.js";
import { PendingRevisions } from "./pending-revisions.js";
import type { EnqueueOutcome, JobLease, JobWorker, QueueListeners, QueuedJobView, StoryJob, StoryQueue } from "./port.js";
import type { QuarantinedJob } from "./quarantine.js";
import { storyKey } from "../story-key/index.js";

export interface EmbeddedQueueOptions extends QueueListeners {
  /** The queue's folder, `<harnessHome>/queue`. */
  dir: string;
  /** Jobs run at once by this process (`HARNESS_CONCURRENCY`, default 1). */
  concurrency?: number;
  /** `HARNESS_INSTALLATION_SLOTS`: jobs of one installation running at once; unset, no limit. */
  installationSlots?: number;
  deliveryMemory?: number;
  /** How often the folder is re-read for jobs of another process or locks freed by a dead one. */
  rescanMs?: number;
  log?: { error: (message: string) => void };
  /** Enqueue appends to a write-ahead log (`queue/wal/`); a job's file is written when a runner claims it. */
  writeAheadLog?: boolean;
  /** Test seam: a log segment rolls at this size. */
  walSegmentBytes?: number;
  /** Test seam: awaited between an enqueue's two writes (the job file, then its delivery ids), where a crash is injected. */
  crashPoint?: () => Promise<void>;
}

/**
 * The embedded queue: durable on disk (one atomically written file per job, a bounded log of
 * delivery ids), one active job per story, `concurrency` workers, and a lock file per running
 * job naming its owner so that two App processes on one folder never run a job together and a
 * job whose runner died (kill -9 included) is picked up again with `interruptions` counted.
 */
export class EmbeddedQueue implements StoryQueue {
  private readonly records = new Map<string, JobRecord>();
  private readonly activeStories = new Map<string, string>();
  private readonly running = new Map<string, Promise<void>>();
  /** Jobs a live process elsewhere holds; retried on the next rescan. */
  private readonly heldElsewhere = new Set<string>();
  /** Jobs enqueued here whose file is being written: a rescan must not drop them. */
  private readonly writing = new Set<string>();
  /** Jobs finished here; a rescan that listed the folder before the removal must not bring them back. */
  private readonly finished = new Set<string>();
  /** Jobs whose claim failed on a write; told once per failure streak. */
  private readonly writeFailed = new Set<string>();
  private readonly self: LockOwner = newLockOwner();
  private listeners: QueueListeners;
  /** Quarantined before anyone listened (at open): told to the first listener. */
  private readonly untold: QuarantinedJob[] = [];
  private readonly abort = new AbortController();
  private worker: JobWorker | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The pump's pass under way, if any. */
  private pumping: Promise<void> | undefined;
  // Stryker disable next-line BooleanLiteral: a pump asked for before the first one only makes one more pass, which claims nothing the first left (a job it could not claim is set aside until a rescan)
  private pumpAgain = false;
  private closed = false;
  /** Revise jobs waiting for their story's run to end, batched into its next round. */
  private readonly pending: PendingRevisions;
  /** Per story, the tail of its admissions and endings: a trigger batched as a run ends is never lost between the two. */
  private readonly storyTurns = new Map<string, Promise<unknown>>();

  private constructor(
    private readonly store: JobStore,
    private readonly deliveries: DeliveryLog,
    private readonly options: EmbeddedQueueOptions,
  ) {
    this.listeners = { onQuarantine: options.onQuarantine, onWriteFailure: options.onWriteFailure };
    this.pending = new PendingRevisions(join(options.dir, "pending"));
  }

  /** Runs `work` after the story's earlier admissions and endings of this process. */
  private inTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.storyTurns.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.storyTurns.set(key, settled);
    void settled.then(() => {
      if (this.storyTurns.get(key) === settled) this.storyTurns.delete(key);
    });
    return next;
  }

  /** Sets who is told of quarantined jobs and failed writes; quarantines found at open are told now. */
  listen(listeners: QueueListeners): void {
    this.listeners = listeners;
    if (listeners.onQuarantine) for (const quarantined of this.untold.splice(0)) listeners.onQuarantine(quarantined);
  }

  /** Opens the queue folder (creating it) and loads the jobs and deliveries left by earlier runs. */
  static async open(options: EmbeddedQueueOptions): Promise<EmbeddedQueue> {
    const store = new JobStore(options.dir, { writeAheadLog: options.writeAheadLog, walSegmentBytes: options.walSegmentBytes });
    await store.init();
    // Unset, the log's own default bound applies.
    const deliveries = await DeliveryLog.open(join(options.dir, "deliveries.log"), options.deliveryMemory);
    const queue = new EmbeddedQueue(store, deliveries, options);
    await queue.rescan();
    for (const record of queue.records.values()) for (const key of dedupeKeys(record.job)) deliveries.note(key);
    // A batch whose story's run ended before a restart (the App stopped in between) runs now.
    for (const key of await queue.pending.stories()) if (!queue.activeStories.has(key)) await queue.promotePending(key);
    return queue;
  }

  get concurrency(): number {
    return Math.max(1, this.options.concurrency ?? 1);
  }

  async enqueue(job: StoryJob): Promise<EnqueueOutcome> {
    if (this.closed) throw new Error("queue is closed");
    const keys = dedupeKeys(job);
    if (keys.some((key) => this.deliveries.has(key))) return { accepted: false, reason: "duplicate-delivery" };
    if (this.activeStories.has(job.storyKey) && job.kind === "revise") {
      return this.inTurn(job.storyKey, async () => {
        // The run may have ended while this waited its turn: then the trigger is queued as its own round.
        if (!this.activeStories.has(job.storyKey)) return this.admit(job, keys);
        await this.pending.add(job);
        this.recordDeliveries(keys);
        return { accepted: true, jobId: `pending:${job.deliveryId}`, batched: true };
      });
    }
    if (this.activeStories.has(job.storyKey)) {
      this.recordDeliveries(keys);
      return { accepted: false, reason: "already-active" };
    }
    return this.admit(job, keys);
  }

  /** Takes the story's batch of revise jobs, if any, and queues it as one job. */
  private async promotePending(key: string): Promise<void> {
    const batch = await this.pending.take(key);
    if (batch) await this.admit(batch, []);
  }

  /** Queues `job`: its file written, its story active, its delivery `keys` remembered. */
  private async admit(job: StoryJob, keys: readonly string[]): Promise<EnqueueOutcome> {
    const record: JobRecord = { id: newJobId(), job, state: "queued", interruptions: 0 };
    // Claimed in memory before the first await, so a concurrent enqueue of the story sees it.
    this.records.set(record.id, record);
    this.activeStories.set(job.storyKey, record.id);
    this.writing.add(record.id);
    try {
      // On the webhook's path: answered once the job is safe from the App dying, flushed to
      // stable storage right after (see docs/benchmarks.md, `## webhook-latency`).
      await this.store.write(record, "background");
    } catch (error) {
      this.records.delete(record.id);
      this.activeStories.delete(job.storyKey);
      throw error;
    } finally {
      this.writing.delete(record.id);
    }
    // After the job file: a crash in between leaves the story active, so a redelivery starts nothing.
    await this.options.crashPoint?.();
    this.recordDeliveries(keys);
    this.schedulePump();
    return { accepted: true, jobId: record.id };
  }

  async isActive(key: string): Promise<boolean> {
    return this.activeStories.has(key);
  }

  /** The jobs this process knows, oldest first (queued and running). */
  jobs(): JobRecord[] {
    return [...this.records.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Read from the folder, so it shows the jobs and states of every process sharing it. */
  async snapshot(): Promise<QueuedJobView[]> {
    return (await this.store.list()).map((record) => ({
      jobId: record.id,
      job: record.job,
      state: record.state,
      interruptions: record.interruptions,
      ...(record.startedAt ? { startedAt: record.startedAt } : {}),
    }));
  }

  /** Starts running jobs with `worker`, now and whenever one is enqueued or the folder changes. */
  start(worker: JobWorker): void {
    this.worker = worker;
    const every = this.options.rescanMs ?? 2000;
    this.timer = setInterval(() => {
      void this.rescan().then(
        () => this.schedulePump(),
        (error: unknown) => this.logError("rescan", error),
      );
    }, every);
    this.timer.unref();
    this.schedulePump();
  }

  /** Resolves when no job is running in this process and none is queued that it could take. */
  async idle(): Promise<void> {
    // A pass adds the jobs it starts to `running` before it ends; a job ends by starting a pass.
    while (this.running.size > 0 || this.pumping) await Promise.allSettled([...this.running.values(), this.pumping]);
  }

  /**
   * Stops taking jobs. With `abortRunning`, running workers get their signal aborted; either
   * way this waits for them, then closes the delivery log. Jobs left queued stay on disk.
   */
  async close(options: { abortRunning?: boolean } = {}): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    if (options.abortRunning) this.abort.abort();
    await this.idle();
    retireLockOwner(this.self);
    await this.deliveries.close();
    await this.store.close();
    await flushPendingWrites();
  }

  /**
   * Re-reads the folder: jobs enqueued by another process, jobs another process finished.
   * Only files not known yet are read; a known job's state is read again when it is claimed.
   */
  async rescan(): Promise<void> {
    // A job enqueued while the folder is being listed may be missing from the listing: only
    // jobs known before it started can be judged gone.
    const knownBefore = new Set(this.records.keys());
    const ids = new Set(await this.store.ids());
    // Read together, off the event loop: a restart over thousands of queued jobs is one pass, not one round trip per file.
    const unknown = [...ids].filter((id) => !this.records.has(id) && !this.finished.has(id));
    for (const [id, read] of await this.store.readMany(unknown)) {
      const record = read instanceof UnreadableJobError ? await this.quarantineUnreadable(read) : read;
      if (record && !this.finished.has(id) && !this.records.has(id)) this.records.set(id, record);
    }
    for (const id of [...this.finished]) if (!ids.has(id)) this.finished.delete(id);
    for (const id of [...this.records.keys()]) {
      if (!ids.has(id) && knownBefore.has(id) && !this.running.has(id) && !this.writing.has(id)) this.records.delete(id);
    }
    this.heldElsewhere.clear();
    this.activeStories.clear();
    for (const record of this.records.values()) this.activeStories.set(record.job.storyKey, record.id);
  }

  private schedulePump(): void {
    if (!this.worker || this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump()
      // Stryker disable next-line ArrowFunction,StringLiteral: a guard against an unhandled rejection; a pass does not fail (a claim catches its errors, a lease runs unawaited)
      .catch((error: unknown) => this.logError("pump", error))
      .finally(() => {
        this.pumping = undefined;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.schedulePump();
        }
      });
  }

  private async pump(): Promise<void> {
    // Re-admissions first, then enqueue order.
    const order = this.jobs().sort((a, b) => Number(b.job.kind === "retry-blocked") - Number(a.job.kind === "retry-blocked"));
    for (const record of order) {
      if (this.closed || this.running.size >= this.concurrency) return;
      // A job whose file is still being written is not claimable yet: its enqueue pumps again once it is on disk.
      if (this.running.has(record.id) || this.heldElsewhere.has(record.id) || this.writing.has(record.id)) continue;
      if (!this.hasInstallationSlot(record.job.installationId)) continue;
      const lease = await this.claim(record);
      if (!lease) {
        this.heldElsewhere.add(record.id);
        continue;
      }
      this.running.set(record.id, this.runLease(lease));
    }
  }

  /**
   * Takes the job's lock, then re-reads the job: a `running` record under a dead lock was
   * interrupted. A write that fails (ENOSPC) gives back the lock and leaves the job queued.
   */
  private async claim(record: JobRecord): Promise<JobLease | undefined> {
    const lockPath = this.store.lockPath(record.id);
    try {
      if (!(await acquireLock(lockPath, this.self))) return undefined;
      const current = await this.readOrQuarantine(record.id);
      if (!current) {
        // Finished by another process meanwhile, or quarantined.
        await releaseLock(lockPath, this.self);
        this.forget(record.id, record.job.storyKey);
        return undefined;
      }
      const interruptions = current.interruptions + (current.state === "running" ? 1 : 0);
      const claimed: JobRecord = { ...current, state: "running", interruptions, startedAt: new Date().toISOString() };
      await this.store.write(claimed);
      this.records.set(claimed.id, claimed);
      this.writeFailed.delete(record.id);
      return { jobId: claimed.id, job: claimed.job, interruptions };
    } catch (error) {
      // Gives back the lock if this claim took it (a failed acquire leaves none; another's lock is left alone).
      await releaseLock(lockPath, this.self).catch((releaseError: unknown) => this.logError(`releasing ${record.id}`, releaseError));
      this.logError(`claiming job ${record.id} of ${record.job.storyKey} (it stays queued and is tried again)`, error);
      if (!this.writeFailed.has(record.id)) {
        this.writeFailed.add(record.id);
        this.listeners.onWriteFailure?.(record.job, asError(error));
      }
      return undefined;
    }
  }

  /** Reads a job file; one that cannot be read is quarantined (logged, told) and reads as gone. */
  private async readOrQuarantine(id: string): Promise<JobRecord | undefined> {
    try {
      return await this.store.read(id);
    } catch (error) {
      if (!(error instanceof UnreadableJobError)) throw error;
      return this.quarantineUnreadable(error);
    }
  }

  /** Quarantines an unreadable job file (logged, told); it reads as gone. */
  private async quarantineUnreadable(error: UnreadableJobError): Promise<undefined> {
    const quarantined = await this.store.quarantine(error.jobId, error.reason);
    if (quarantined) {
      const story = quarantined.story ? ` (story ${storyKey(quarantined.story.owner, quarantined.story.repo, quarantined.story.issueNumber)})` : "";
      this.logError("quarantine", new Error(`moved ${error.reason} to queue/quarantine/${quarantined.file}${story}`));
      if (this.listeners.onQuarantine) this.listeners.onQuarantine(quarantined);
      else this.untold.push(quarantined);
    }
    return undefined;
  }

  private async runLease(lease: JobLease): Promise<void> {
    const worker = this.worker;
    try {
      // Stryker disable next-line ConditionalExpression: a lease is run only by a pump, which runs only once a worker is set
      if (worker) await worker(lease, this.abort.signal);
    } catch (error) {
      this.logError(`job ${lease.jobId}`, error);
    }
    try {
      // Interrupted by close(): leave the job on disk so the next start resumes it.
      if (!this.abort.signal.aborted) {
        this.finished.add(lease.jobId);
        await this.inTurn(lease.job.storyKey, async () => {
          await this.store.remove(lease.jobId);
          this.forget(lease.jobId, lease.job.storyKey);
          // Triggers that arrived while this ran are the story's next round.
          if (!this.closed && !this.activeStories.has(lease.job.storyKey)) await this.promotePending(lease.job.storyKey);
        });
      }
      await releaseLock(this.store.lockPath(lease.jobId), this.self);
    } catch (error) {
      this.logError(`finishing job ${lease.jobId}`, error);
    } finally {
      this.running.delete(lease.jobId);
      this.schedulePump();
    }
  }

  /** `installationSlots`: one installation cannot fill every worker of this process. */
  private hasInstallationSlot(installationId: number): boolean {
    const limit = this.options.installationSlots;
    if (limit === undefined) return true;
    let held = 0;
    for (const record of this.records.values()) if (this.running.has(record.id) && record.job.installationId === installationId) held += 1;
    return held < limit;
  }

  /** Drops a job; its story stays active when another job of it is known (enqueued by another process). */
  private forget(id: string, storyKey: string): void {
    this.records.delete(id);
    if (this.activeStories.get(storyKey) === id) this.activeStories.delete(storyKey);
  }

  /** The live process holding a job, if any (for diagnostics and tests). */
  async holder(jobId: string): Promise<LockOwner | undefined> {
    return liveHolder(this.store.lockPath(jobId), this.self);
  }

  /**
   * Remembers a delivery's ids at once and appends them to the log without waiting: the
   * answer to GitHub does not wait on a thread-pool write (or a compaction of the log). What
   * a crash can lose is safe to lose: an accepted job's file holds its ids (noted at open),
   * and an id of a story already active only spares that story a second "already active" reply.
   */
  private recordDeliveries(keys: readonly string[]): void {
    for (const key of keys) this.deliveries.record(key).catch((error: unknown) => this.logError(`recording delivery ${key}`, error));
  }

  private logError(where: string, error: unknown): void {
    const message = `queue: ${where}: ${asError(error).message}`;
    if (this.options.log) this.options.log.error(message);
    else process.stderr.write(`${message}\n`);
  }
}

/** The error as an Error; errors of Node's own (fs) may come from another realm, so not `instanceof`. */
function asError(error: unknown): Error {
  return typeof error === "object" && error !== null && "message" in error ? (error as Error) : new Error(String(error));
}

/** What makes a job a repeat: its delivery id, and the identity of its event (a replay under a new delivery id keeps it). */
function dedupeKeys(job: StoryJob): string[] {
  return job.eventKey ? [job.deliveryId, `event:${job.eventKey}`] : [job.deliveryId];
}
