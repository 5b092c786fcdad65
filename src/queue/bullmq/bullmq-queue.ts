import { Queue, type Job, type Worker } from "bullmq";
import { Redis } from "ioredis";
import {
  DEFAULT_LEASE_TIMING,
  type EnqueueOutcome,
  type JobWorker,
  type LeaseTiming,
  type LocalWorkSource,
  type QuarantinedJobView,
  type QueuedJobView,
  type QueueListeners,
  type StoryJob,
  type StoryQueue,
} from "../port.js";
import type { WorkerReport } from "../../status/model/index.js";
import { RedisQuarantine } from "./redis-quarantine.js";
import { ClosingWorker } from "./closing-worker.js";
import { parseRedisUrl } from "./connection.js";
import { InstallationSlots } from "./installation-slots.js";
import { adapterKeys, KEY_PREFIX, QUEUE_NAME, storyJobId } from "./keys.js";
import { checkStoryJob, readStoryJob } from "./story-data.js";
import { StoryProcessor } from "./processor.js";
import { RedisPendingRevisions } from "./redis-pending.js";
import { WorkerReports } from "./worker-reports.js";
import { storyKey } from "../../story-key/index.js";

/** A delivery id is remembered for a week: GitHub redelivers within days, not later. */
export const DEFAULT_DELIVERY_MEMORY_MS = 7 * 24 * 3600 * 1000;

export interface BullmqQueueOptions {
  /** `HARNESS_QUEUE`: `redis://host:6379/0`. */
  url: string;
  /** Jobs run at once by this process's worker (`HARNESS_CONCURRENCY`, default 1). */
  concurrency?: number;
  /** `HARNESS_INSTALLATION_SLOTS`: jobs of one installation running at once across all workers; unset, no limit. */
  installationSlots?: number;
  /** Lease TTL and heartbeat; tests pass short ones. */
  lease?: Partial<LeaseTiming>;
  deliveryMemoryMs?: number;
  /** How long a job whose installation has no free slot is set aside before a worker looks again. */
  slotRetryMs?: number;
  /** Key prefix (default `harness`); tests give each queue its own. */
  prefix?: string;
  log?: { error: (message: string) => void };
  /** How often a worker renews its report (`harness status`); the lease heartbeat unless told. */
  reportEveryMs?: number;
  /** How long `close` waits for Redis, its steps and the hand-backs together, before it gives up on it ({@link DEFAULT_CLOSE_GRACE_MS}). */
  closeGraceMs?: number;
  /** Test seam: awaited between an enqueue's two writes (the job, then its delivery ids), where a crash is injected. */
  crashPoint?: () => Promise<void>;
}

/** Remembers every key unless one of them is remembered already (then 0): one atomic step on Redis. */
const REMEMBER_UNSEEN = `
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then return 0 end
end
for _, key in ipairs(KEYS) do
  redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
end
return 1
`;

/** How long `close` waits for Redis (handing back jobs, the last report) before it gives up on it. */
export const DEFAULT_CLOSE_GRACE_MS = 5000;

/** Reconnect policy of every connection: back off up to 2 s; once the queue is closing, end (pending commands then fail). */
export function reconnectDelay(shutdown: { closing?: boolean }, times: number): number | null {
  return shutdown.closing ? null : Math.min(times * 200, 2000);
}

/**
 * How long a connection that is told to end waits for its socket to close before it destroys it. Its
 * timer holds the process; a socket Redis already dropped never closes again, so with ioredis's
 * default (2 s) a process closing with Redis down lingered that long after `close`.
 */
const DISCONNECT_TIMEOUT_MS = 200;

const PRIORITY = { "retry-blocked": 1, revise: 1, start: 2 } as const;

/** The jobs BullMQ holds that are not finished. */
const LIVE_STATES = ["active", "waiting", "prioritized", "delayed"] as const;

/**
 * The queue port on BullMQ and Redis, for `harness serve` and any number of `harness worker`
 * processes on any machines. One BullMQ job per story (its id is the story's), so a story is
 * queued or running at most once; BullMQ's job lock (TTL `lockTtlMs`, renewed every
 * `heartbeatMs` by the running worker) keeps it on one worker, and its stalled-job check gives
 * the job of a worker that died to another once the lock expired. Re-admissions go first.
 */
export class BullmqQueue implements StoryQueue {
  private worker: Worker | undefined;
  private processor: StoryProcessor | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly keys: ReturnType<typeof adapterKeys>;
  readonly slots: InstallationSlots;
  readonly reports: WorkerReports;
  readonly quarantine: RedisQuarantine;
  /** Revise jobs of stories whose job is queued or running, batched into their next round. */
  readonly pending: RedisPendingRevisions;
  /** Promotions of batches under way (a job ended, a sweep), awaited at close. */
  private readonly promoting = new Set<Promise<void>>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private listeners: QueueListeners = {};
  private sharing: (LocalWorkSource & { timer: NodeJS.Timeout; publishing?: Promise<void> }) | undefined;

  private constructor(
    private readonly queue: Queue,
    private readonly redis: Redis,
    private readonly options: BullmqQueueOptions,
    /** Read by every connection's reconnect policy: once closing, a lost connection ends instead of retrying. */
    private readonly shutdown: { closing?: boolean },
    readonly lease: LeaseTiming,
  ) {
    this.keys = adapterKeys(this.prefix);
    this.slots = new InstallationSlots(redis, this.keys.slots, options.installationSlots, this.lease.lockTtlMs);
    // Shown as not live after three missed renewals.
    this.reports = new WorkerReports(redis, { index: this.keys.workers, report: this.keys.worker }, 3 * this.reportEveryMs);
    this.quarantine = new RedisQuarantine(redis, this.keys.quarantine);
    this.pending = new RedisPendingRevisions({
      redis,
      keys: this.keys,
      jobKey: (jobId) => queue.toKey(jobId),
      turnTtlMs: this.lease.lockTtlMs,
      deliveryMemoryMs: options.deliveryMemoryMs ?? DEFAULT_DELIVERY_MEMORY_MS,
      isLive: async (key) => (await this.liveJob(storyJobId(key))) !== undefined,
      add: (job) => this.addJob(job),
      remember: (seenKeys, job) => this.remember(seenKeys, job),
      logError: (where, error) => this.logError(where, error),
    });
  }

  private get reportEveryMs(): number {
    return this.options.reportEveryMs ?? this.lease.heartbeatMs;
  }

  /** Connects to Redis (failing with the URL, password hidden, when it cannot). */
  static async open(options: BullmqQueueOptions): Promise<BullmqQueue> {
    const target = parseRedisUrl(options.url);
    // Refused before anything connects, so a refusal leaves no connection open.
    const lease = { ...DEFAULT_LEASE_TIMING, ...options.lease };
    if (lease.heartbeatMs >= lease.lockTtlMs) throw new RangeError("the lease heartbeat must be shorter than its TTL");
    let lastError: Error | undefined;
    // `closing` is set once the queue closes.
    const shutdown: { closing?: boolean } = {};
    const redis = new Redis(target.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      disconnectTimeout: DISCONNECT_TIMEOUT_MS,
      retryStrategy: (times) => reconnectDelay(shutdown, times),
    });
    // Kept for the connection's life (it only notes the error); once open, errors are logged too.
    redis.on("error", (error: Error) => {
      lastError = error;
    });
    try {
      await redis.connect();
    } catch (error) {
      // No retries before the first connection: `connect` fails at the first refusal, and this
      // ends the connection and the retry it had planned, so a Redis that is not there is said at once.
      redis.disconnect();
      const why = lastError ?? error;
      throw new Error(`HARNESS_QUEUE: cannot reach Redis at ${target.display}: ${why instanceof Error ? why.message : String(why)}`);
    }
    const queue = new Queue(QUEUE_NAME, {
      connection: { url: target.url, disconnectTimeout: DISCONNECT_TIMEOUT_MS, retryStrategy: (times: number) => reconnectDelay(shutdown, times) },
      prefix: options.prefix ?? KEY_PREFIX,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
    });
    const opened = new BullmqQueue(queue, redis, options, shutdown, lease);
    queue.on("error", (error) => opened.logError("queue", error));
    redis.on("error", (error) => opened.logError("redis", error));
    await queue.waitUntilReady();
    return opened;
  }

  get concurrency(): number {
    return Math.max(1, this.options.concurrency ?? 1);
  }

  private get prefix(): string {
    return this.options.prefix ?? KEY_PREFIX;
  }

  /**
   * Two writes, in this order: the job, then its delivery ids. A process that dies between them
   * leaves the story queued with its delivery not yet remembered, so GitHub's redelivery is
   * refused as `already-active` (and remembered then), never as a duplicate of a job that was
   * never added. The other order lost the story: its delivery was remembered, its job was not.
   */
  async enqueue(job: StoryJob): Promise<EnqueueOutcome> {
    if (this.closed) throw new Error("queue is closed");
    checkStoryJob(job);
    // The delivery id and the event's own identity: a replay under a new delivery id is a repeat too.
    const seenKeys = [job.deliveryId, ...(job.eventKey ? [`event:${job.eventKey}`] : [])].map((key) => this.keys.delivery(key));
    if ((await this.redis.exists(...seenKeys)) > 0) return { accepted: false, reason: "duplicate-delivery" };
    const jobId = storyJobId(job.storyKey);
    // One revision at a time per story: a revise job of a queued or running story waits for its next round.
    if (job.kind === "revise") return this.pending.enqueue(job, jobId, seenKeys);
    if (await this.liveJob(jobId)) {
      await this.remember(seenKeys, job);
      return { accepted: false, reason: "already-active" };
    }
    await this.queue.add("story", job, { jobId, priority: PRIORITY[job.kind] });
    await this.options.crashPoint?.();
    // Two processes given the same delivery at once both add (BullMQ keeps one job): the first to remember it answers.
    if (!(await this.remember(seenKeys, job))) return { accepted: false, reason: "duplicate-delivery" };
    // BullMQ ignores an add under an id it holds: when another delivery queued the story in between, ours was not added.
    const stored = await this.queue.getJob(jobId);
    if (stored && (stored.data as Partial<StoryJob>).deliveryId !== job.deliveryId) return { accepted: false, reason: "already-active" };
    return { accepted: true, jobId };
  }

  /** Adds the story's job; true when the job stored under the story's id is this one (BullMQ ignores an add under an id it holds). */
  private async addJob(job: StoryJob): Promise<boolean> {
    const jobId = storyJobId(job.storyKey);
    await this.queue.add("story", job, { jobId, priority: PRIORITY[job.kind] });
    const stored = await this.queue.getJob(jobId);
    return (stored?.data as Partial<StoryJob> | undefined)?.deliveryId === job.deliveryId;
  }

  /** Remembers the delivery keys unless one of them is remembered already (false then), in one step. */
  private async remember(seenKeys: string[], job: StoryJob): Promise<boolean> {
    const fresh = await this.redis.eval(
      REMEMBER_UNSEEN,
      seenKeys.length,
      ...seenKeys,
      job.storyKey,
      String(this.options.deliveryMemoryMs ?? DEFAULT_DELIVERY_MEMORY_MS),
    );
    return fresh === 1;
  }

  async isActive(storyKey: string): Promise<boolean> {
    return (await this.liveJob(storyJobId(storyKey))) !== undefined;
  }

  /** The story's job when it is queued, set aside or running. */
  private async liveJob(jobId: string): Promise<Job | undefined> {
    const job = await this.queue.getJob(jobId);
    if (!job) return undefined;
    const state = await job.getState();
    return (LIVE_STATES as readonly string[]).includes(state) ? job : undefined;
  }

  start(worker: JobWorker): void {
    if (this.worker) throw new Error("the queue's worker is already started");
    const processor = new StoryProcessor({
      worker,
      redis: this.redis,
      runsKey: this.keys.runs,
      slots: this.slots,
      heartbeatMs: this.lease.heartbeatMs,
      slotRetryMs: this.options.slotRetryMs ?? Math.min(1000, this.lease.heartbeatMs),
      logError: (where, error) => this.logError(where, error),
      quarantine: this.quarantine,
      workerId: () => this.reports.self,
      // Stryker disable next-line OptionalChaining: without a listener the call throws after the job is kept and logged; the job then fails instead of completing, and BullMQ removes both alike (removeOnFail), telling no one
      onQuarantine: (quarantined) => this.listeners.onQuarantine?.(quarantined),
      continueAsNextRound: (key, jobId) => this.pending.continueAsNextRound(key, jobId),
    });
    this.processor = processor;
    this.worker = new ClosingWorker(QUEUE_NAME, (job, token) => processor.process(job, token), {
      connection: {
        url: parseRedisUrl(this.options.url).url,
        maxRetriesPerRequest: null,
        disconnectTimeout: DISCONNECT_TIMEOUT_MS,
        retryStrategy: (times: number) => reconnectDelay(this.shutdown, times),
      },
      prefix: this.prefix,
      concurrency: this.concurrency,
      lockDuration: this.lease.lockTtlMs,
      lockRenewTime: this.lease.heartbeatMs,
      stalledInterval: this.lease.heartbeatMs,
      // The runner decides how often an interrupted story is resumed (`interrupted` after that).
      maxStalledCount: 1000,
    });
    this.worker.on("error", (error) => this.logError("worker", error));
    // A trigger batched after the job's last look at its list (it ended without a next round) is queued once the job is gone.
    const promoteAfter = (job: Job | undefined): void => {
      const story = job ? readStoryJob(job.data) : undefined;
      if (story && !this.closed) this.track(this.pending.promote(story.storyKey));
    };
    this.worker.on("completed", promoteAfter);
    this.worker.on("failed", promoteAfter);
    // A batch whose job's worker died as the job ended has no job to take it: every worker looks, now and then.
    this.track(this.pending.sweep());
    this.sweepTimer = setInterval(() => {
      if (this.promoting.size === 0) this.track(this.pending.sweep());
    }, this.lease.lockTtlMs);
    this.sweepTimer.unref();
  }

  /** Keeps a promotion until it settles (close waits for it); its failure is logged. */
  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.logError("pending revisions", error));
    this.promoting.add(tracked);
    void tracked.finally(() => this.promoting.delete(tracked));
  }

  /** Who is told of jobs set aside (the App comments on their story). A write failure is not this adapter's to tell. */
  listen(listeners: QueueListeners): void {
    this.listeners = listeners;
  }

  /** The jobs set aside because their data is not a story job, newest first, and how many in all. */
  async quarantinedJobs(): Promise<{ jobs: QuarantinedJobView[]; total: number }> {
    const { records, total } = await this.quarantine.list();
    return {
      jobs: records.map((record) => ({
        entry: record.entry,
        jobId: record.jobId,
        reason: record.reason,
        worker: record.worker,
        at: record.at,
        ...(record.story ? { story: storyKey(record.story.owner, record.story.repo, record.story.issueNumber) } : {}),
      })),
      total,
    };
  }

  async idle(): Promise<void> {
    await this.processor?.idle();
  }

  /**
   * Stops taking jobs, hands the running ones back (with `abortRunning`) and withdraws or leaves
   * this worker's report. Bounded when Redis is gone: once closing, a connection that is lost
   * ends instead of reconnecting, so every step still waiting on Redis fails, and a close whose
   * Redis steps and hand-backs have not all ended within one `closeGraceMs` gives up on them. Either way it says so:
   * the jobs it could not hand back are taken by another worker once their lease expires.
   */
  async close(options: { abortRunning?: boolean } = {}): Promise<void> {
    this.closing ??= this.shutDown(options);
    return this.closing;
  }

  private async shutDown(options: { abortRunning?: boolean }): Promise<void> {
    this.closed = true;
    if (this.sharing) clearInterval(this.sharing.timer);
    clearInterval(this.sweepTimer);
    if (options.abortRunning) this.processor?.abortAll();
    // Takes no more jobs from here on (without a word to Redis).
    await this.worker?.pause(true);
    // The stories are this process's own work: they end once aborted (or done), Redis or not.
    await this.processor?.idle();
    this.shutdown.closing = true;
    const failures: string[] = [];
    const note =
      (what: string) =>
      (error: unknown): void => {
        failures.push(`${what}: ${errorText(error)}`);
      };
    const steps = (async () => {
      // Unreachable now (a lost connection ends from here on): BullMQ's worker is closed without waiting on Redis.
      const reachable = await this.redis.ping().then(
        () => true,
        (error: unknown) => {
          note("Redis unreachable")(error);
          return false;
        },
      );
      await this.worker?.close(!reachable).catch(note("worker"));
      await Promise.allSettled([...this.promoting]);
      // A story stopped by the shutdown is handed back after it ends (a forced worker close does not wait for that): its
      // attempt settles, or fails and says so, before close returns, so a process that exits next does not cut it short.
      await this.processor?.settled();
      if (reachable) await this.lastReport(note("report"));
      await this.queue.close().catch(note("queue"));
      // Every step that used this connection has ended: dropped, not asked to quit (nothing is left to answer).
      this.redis.disconnect();
    })();
    // One grace over every step above, the hand-backs included.
    let timer: NodeJS.Timeout | undefined;
    const graceMs = this.options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    let gaveUp = false;
    await Promise.race([
      steps,
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          gaveUp = true;
          resolve();
        }, graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (gaveUp) {
      failures.push(`Redis did not answer within ${graceMs} ms`);
      this.redis.disconnect();
    }
    if (failures.length > 0) {
      this.logError(
        "close",
        new Error(`${failures.join("; ")}; jobs not handed back are taken by another worker once their lease (${this.lease.lockTtlMs} ms) expires`),
      );
    }
  }

  /** Publishes this worker's local work now and on every `reportEveryMs` until `close`. */
  shareLocalWork(source: LocalWorkSource): void {
    if (this.sharing) throw new Error("this queue already shares a worker's local work");
    // Closed: nothing is published (close has withdrawn or left the report already).
    if (this.closed) return;
    this.reports.claim(source.home);
    const timer = setInterval(() => this.publishReport(sharing), this.reportEveryMs);
    timer.unref();
    const sharing: NonNullable<BullmqQueue["sharing"]> = { ...source, timer };
    this.sharing = sharing;
    this.publishReport(sharing);
  }

  /** One renewal; skipped while the previous one is still under way (`close` stops the renewals). */
  private publishReport(sharing: NonNullable<BullmqQueue["sharing"]>): void {
    if (sharing.publishing) return;
    sharing.publishing = (async () => {
      try {
        await this.reports.publish(await sharing.collect(), this.processor?.runningJobs() ?? [], sharing.home);
      } catch (error) {
        this.logError("worker report", error);
      } finally {
        sharing.publishing = undefined;
      }
    })();
  }

  /** At close: the report withdrawn when nothing is left on this worker's disk, else left behind (shown as not live). */
  private async lastReport(failed: (error: unknown) => void): Promise<void> {
    const sharing = this.sharing;
    if (!sharing) return;
    await sharing.publishing;
    try {
      // What the worker can still settle (its outbox's writes due now) is not left in the report.
      await sharing.settle?.();
      const work = await sharing.collect();
      if (work.quarantined.length === 0 && work.undelivered.length === 0) await this.reports.withdraw();
      else await this.reports.publish(work, [], sharing.home);
    } catch (error) {
      failed(error);
    }
  }

  async workerReports(): Promise<WorkerReport[]> {
    return this.reports.list();
  }

  async snapshot(): Promise<QueuedJobView[]> {
    const jobs = await this.queue.getJobs([...LIVE_STATES]);
    const runs = await this.redis.hgetall(this.keys.runs);
    const views: QueuedJobView[] = [];
    for (const job of jobs) {
      const story = readStoryJob(job.data);
      if (!story) continue;
      // Read by its id, so it has one.
      const jobId = String(job.id);
      const state = await job.getState();
      const starts = Number(runs[jobId] ?? 0);
      views.push({
        jobId,
        job: story,
        state: state === "active" ? "running" : "queued",
        interruptions: Math.max(0, starts - (state === "active" ? 1 : 0)),
        // Read before its state: a job that became active in between has no start time yet.
        ...(state === "active" && job.processedOn ? { startedAt: new Date(job.processedOn).toISOString() } : {}),
      });
    }
    return views.sort((a, b) => a.job.enqueuedAt.localeCompare(b.job.enqueuedAt));
  }

  private logError(where: string, error: unknown): void {
    const message = `queue (redis): ${where}: ${errorText(error)}`;
    if (this.options.log) this.options.log.error(message);
    else process.stderr.write(`${message}\n`);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
