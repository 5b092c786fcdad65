import { DelayedError, WaitingError, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { JobLease, JobWorker } from "../port.js";
import type { InstallationSlots } from "./installation-slots.js";
import type { QuarantinedJob } from "../quarantine.js";
import { storyJobIssues, type RedisQuarantine } from "./redis-quarantine.js";
import { readStoryJob } from "./story-data.js";
import { storyKey } from "../../story-key/index.js";

export interface StoryProcessorArgs {
  worker: JobWorker;
  redis: Redis;
  /** Hash of job id → starts, so a lease knows how often the job was interrupted. */
  runsKey: string;
  slots: InstallationSlots;
  heartbeatMs: number;
  slotRetryMs: number;
  logError: (where: string, error: unknown) => void;
  /** Where jobs whose data is not a story job are kept. */
  quarantine: RedisQuarantine;
  /** This process's id in the worker reports (it may be renamed after the data directory). */
  workerId: () => string;
  /** Told of every job set aside (the App tells its story); read when a job is set aside. */
  onQuarantine: (quarantined: QuarantinedJob) => void;
  /** When a story's run ended: true when the triggers that arrived meanwhile became the job's next round (its data replaced). */
  continueAsNextRound?: (storyKey: string, jobId: string) => Promise<boolean>;
}

/**
 * What a BullMQ worker does with one job: set it aside when its data is not a story job, take a slot of the job's installation (or set the
 * job aside for a moment when its installation has none free), count the start, run the story
 * with the slot renewed on every heartbeat, and finish. A job stopped by `abortAll` goes back
 * to the waiting list at once, for whichever worker is free.
 */
export class StoryProcessor {
  private readonly abort = new AbortController();
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly args: StoryProcessorArgs) {}

  /** Each job's whole handling, its hand-back included, until it settles. */
  private readonly handling = new Set<Promise<void>>();

  async process(job: Job, token: string | undefined): Promise<void> {
    const handled = this.handle(job, token);
    this.handling.add(handled);
    try {
      await handled;
    } finally {
      this.handling.delete(handled);
    }
  }

  /** Resolves when every job's handling has settled, hand-backs included (`idle` waits only for the stories). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.handling]);
  }

  private async handle(job: Job, token: string | undefined): Promise<void> {
    const jobId = job.id;
    // Stryker disable next-line ConditionalExpression: BullMQ hands a worker only jobs it holds by id, so an id is never missing here
    if (jobId === undefined) return;
    const story = readStoryJob(job.data);
    if (!story) return this.setAside(job, jobId, token);
    const { slots, redis } = this.args;
    if (!(await slots.acquire(story.installationId, jobId))) {
      await job.moveToDelayed(Date.now() + this.args.slotRetryMs, token);
      throw new DelayedError();
    }
    const starts = await redis.hincrby(this.args.runsKey, jobId, 1);
    const lease: JobLease = { jobId, job: story, interruptions: starts - 1 };
    const heartbeat = setInterval(() => {
      slots.renew(story.installationId, jobId).catch((error: unknown) => this.args.logError(`heartbeat of ${jobId}`, error));
    }, this.args.heartbeatMs);
    const run = this.runWorker(lease);
    this.running.set(jobId, run);
    try {
      await run;
    } finally {
      clearInterval(heartbeat);
      this.running.delete(jobId);
    }
    await slots.release(story.installationId, jobId).catch((error: unknown) => this.args.logError(`slot of ${jobId}`, error));
    if (this.abort.signal.aborted) {
      // Stopped by shutdown: back to the waiting list now, not after the lock expires.
      try {
        await job.moveToWait(token);
      } catch (error) {
        // Redis is gone: the job stays active there, and its lock, no longer renewed, expires.
        this.args.logError(
          `job ${jobId}`,
          new Error(`could not be handed back (${error instanceof Error ? error.message : String(error)}); another worker takes it once its lease expires`),
        );
      }
      // Either way BullMQ must not finish the job (it would retry that for as long as Redis is away).
      throw new WaitingError();
    }
    if (await this.nextRound(story.storyKey, jobId)) {
      // The job is the story's next round now: back to the waiting list, so the story stays queued throughout.
      await job
        .moveToWait(token)
        .catch((error: unknown) =>
          this.args.logError(
            `job ${jobId}`,
            new Error(`its next round waits for its lease to expire: ${error instanceof Error ? error.message : String(error)}`),
          ),
        );
      throw new WaitingError();
    }
    await redis.hdel(this.args.runsKey, jobId);
  }

  /** Asks whether the run's story has a next round batched; a failure to ask leaves the batch for the sweep. */
  private async nextRound(storyKey: string, jobId: string): Promise<boolean> {
    try {
      return (await this.args.continueAsNextRound?.(storyKey, jobId)) ?? false;
    } catch (error) {
      this.args.logError(`the next round of ${storyKey}`, error);
      return false;
    }
  }

  /**
   * A job whose data is not a story job (another version wrote it, or it was damaged) is kept in
   * the quarantine, then finished; when Redis will not take it, it waits and is tried again.
   */
  private async setAside(job: Job, jobId: string, token: string | undefined): Promise<void> {
    const reason = storyJobIssues(job.data);
    let quarantined: Awaited<ReturnType<RedisQuarantine["put"]>>;
    try {
      quarantined = await this.args.quarantine.put({ jobId, data: job.data, reason, worker: this.args.workerId() });
    } catch (error) {
      this.args.logError(
        `job ${jobId}`,
        new Error(
          `its data is not a story job (${reason}) and could not be set aside (${error instanceof Error ? error.message : String(error)}); tried again`,
        ),
      );
      await job.moveToDelayed(Date.now() + this.args.slotRetryMs, token);
      throw new DelayedError();
    }
    const story = quarantined.story ? ` (story ${storyKey(quarantined.story.owner, quarantined.story.repo, quarantined.story.issueNumber)})` : "";
    this.args.logError("quarantine", new Error(`job ${jobId}${story} set aside in ${quarantined.kept}: ${reason}`));
    this.args.onQuarantine(quarantined);
  }

  private async runWorker(lease: JobLease): Promise<void> {
    try {
      await this.args.worker(lease, this.abort.signal);
    } catch (error) {
      this.args.logError(`job ${lease.jobId}`, error);
    }
  }

  /** The ids of the jobs running in this process. */
  runningJobs(): string[] {
    return [...this.running.keys()];
  }

  /** Aborts every running job's signal (shutdown). */
  abortAll(): void {
    this.abort.abort();
  }

  /** Resolves when no job runs in this process. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }
}
