/**
 * Revision triggers that arrive while their story's job is queued or running, on Redis: kept in a
 * per-story list, in arrival order, and batched into the story's next round (one revision at a
 * time per story, as on the embedded queue). The list lives in Redis, so a worker that dies loses
 * none of it: the job it ran is taken over, and the list is read when that job ends.
 *
 * A story's admissions of revisions and its promotions take turns on a lock in Redis (its TTL
 * covers a holder that died), because two of them must not both find the story free and add two
 * rounds, nor both take the same list. What a step writes is ordered so that a death between two
 * steps repeats a trigger in the next round rather than drops it.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { mergeRevisionJobs } from "../pending-revisions.js";
import type { EnqueueOutcome, StoryJob } from "../port.js";
import { readStoryJob } from "./story-data.js";

/** Remembers the delivery keys and appends the job to its story's list, unless a key is remembered already (then 0). */
const BATCH = `
local seen = #KEYS - 2
for i = 1, seen do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
for i = 1, seen do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
redis.call('RPUSH', KEYS[seen + 1], ARGV[3])
redis.call('SADD', KEYS[seen + 2], ARGV[1])
return 1
`;

/** Drops the first ARGV[1] entries of the list (taken into a round); a list emptied leaves the index. */
const TRIM = `
redis.call('LTRIM', KEYS[1], tonumber(ARGV[1]), -1)
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[2]) end
return 1
`;

/**
 * The running job becomes the next round, in one step: its data replaced by the batch, its start
 * count cleared (the next round is not an interrupted one), the batch dropped from the list. 0 when
 * the job is gone.
 */
const CONTINUE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[3], tonumber(ARGV[3]), -1)
if redis.call('LLEN', KEYS[3]) == 0 then redis.call('SREM', KEYS[4], ARGV[4]) end
return 1
`;

/** Frees the lock when this holder still has it. */
const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface RedisPendingArgs {
  redis: Redis;
  keys: { pending: (storyKey: string) => string; pendingStories: string; storyTurn: (storyKey: string) => string; runs: string };
  /** BullMQ's hash of a job (its data is the `data` field). */
  jobKey: (jobId: string) => string;
  /** How long a story's lock holds when its holder dies. */
  turnTtlMs: number;
  deliveryMemoryMs: number;
  /** True when the story's job is queued, set aside or running. */
  isLive: (storyKey: string) => Promise<boolean>;
  /** Adds the story's job; true when the job stored under the story's id is this one (false: another got in first). */
  add: (job: StoryJob) => Promise<boolean>;
  /** Remembers delivery keys unless one is remembered (false then). */
  remember: (seenKeys: string[], job: StoryJob) => Promise<boolean>;
  logError: (where: string, error: unknown) => void;
}

/** The Redis adapter's per-story lists of revise jobs waiting for their story's job to end. */
export class RedisPendingRevisions {
  constructor(private readonly args: RedisPendingArgs) {}

  /**
   * A revise job: batched when its story's job is queued or running, else queued as the story's
   * next round together with whatever a job that ended left in the list.
   */
  async enqueue(job: StoryJob, jobId: string, seenKeys: string[]): Promise<EnqueueOutcome> {
    return this.inTurn(job.storyKey, async () => {
      if (await this.args.isLive(job.storyKey)) return this.batch(job, seenKeys);
      const { jobs, taken } = await this.read(job.storyKey);
      const round = mergeRevisionJobs([...jobs, job]) ?? job;
      // A start or a re-admission (they do not take turns) got in first: this trigger waits for it.
      if (!(await this.args.add(round))) return this.batch(job, seenKeys);
      await this.trim(job.storyKey, taken);
      if (!(await this.args.remember(seenKeys, job))) return { accepted: false, reason: "duplicate-delivery" };
      return { accepted: true, jobId };
    });
  }

  /**
   * Called by the worker when its story's run ended: the triggers that arrived meanwhile become the
   * job's next round (the job then goes back to the waiting list as that round). False when none did.
   */
  async continueAsNextRound(storyKey: string, jobId: string): Promise<boolean> {
    return this.inTurn(storyKey, async () => {
      const { jobs, taken } = await this.read(storyKey);
      const round = mergeRevisionJobs(jobs);
      if (!round) {
        if (taken > 0) await this.trim(storyKey, taken);
        return false;
      }
      const { keys, redis } = this.args;
      const done = await redis.eval(
        CONTINUE,
        4,
        this.args.jobKey(jobId),
        keys.runs,
        keys.pending(storyKey),
        keys.pendingStories,
        JSON.stringify(round),
        jobId,
        String(taken),
        storyKey,
      );
      return done === 1;
    });
  }

  /** Queues a story's list as its next round when no job of the story is left to take it (its job ended, or its worker died as it ended). */
  async promote(storyKey: string): Promise<void> {
    await this.inTurn(storyKey, async () => {
      if (await this.args.isLive(storyKey)) return;
      const { jobs, taken } = await this.read(storyKey);
      const round = mergeRevisionJobs(jobs);
      // Added first, then dropped from the list: a death in between repeats the batch, never loses it.
      if (round && !(await this.args.add(round))) return;
      await this.trim(storyKey, taken);
    });
  }

  /** Promotes every story's list that no job will take (at a worker's start, and on every sweep). */
  async sweep(): Promise<void> {
    for (const storyKey of await this.args.redis.smembers(this.args.keys.pendingStories)) {
      await this.promote(storyKey).catch((error: unknown) => this.args.logError(`pending revisions of ${storyKey}`, error));
    }
  }

  private async batch(job: StoryJob, seenKeys: string[]): Promise<EnqueueOutcome> {
    const { keys, redis } = this.args;
    const fresh = await redis.eval(
      BATCH,
      seenKeys.length + 2,
      ...seenKeys,
      keys.pending(job.storyKey),
      keys.pendingStories,
      job.storyKey,
      String(this.args.deliveryMemoryMs),
      JSON.stringify(job),
    );
    if (fresh !== 1) return { accepted: false, reason: "duplicate-delivery" };
    return { accepted: true, jobId: `pending:${job.deliveryId}`, batched: true };
  }

  /** The story's list: its revise jobs (an entry that is not one is dropped with a log line) and how many entries were read. */
  private async read(storyKey: string): Promise<{ jobs: StoryJob[]; taken: number }> {
    const entries = await this.args.redis.lrange(this.args.keys.pending(storyKey), 0, -1);
    const jobs: StoryJob[] = [];
    for (const entry of entries) {
      const job = parseJob(entry);
      if (job?.kind === "revise" && job.storyKey === storyKey) jobs.push(job);
      else this.args.logError(`pending revisions of ${storyKey}`, new Error("dropped an entry that is not a revise job of the story"));
    }
    return { jobs, taken: entries.length };
  }

  private async trim(storyKey: string, taken: number): Promise<void> {
    await this.args.redis.eval(TRIM, 2, this.args.keys.pending(storyKey), this.args.keys.pendingStories, String(taken), storyKey);
  }

  /** Runs `work` holding the story's lock (waiting for it; a holder that died frees it after `turnTtlMs`). */
  private async inTurn<T>(storyKey: string, work: () => Promise<T>): Promise<T> {
    const { redis, keys, turnTtlMs } = this.args;
    const key = keys.storyTurn(storyKey);
    const token = randomBytes(12).toString("hex");
    // A holder works for a few round trips; waiting twice its TTL covers one that died holding it.
    const deadline = Date.now() + 2 * turnTtlMs;
    while ((await redis.set(key, token, "PX", turnTtlMs, "NX")) !== "OK") {
      if (Date.now() > deadline) throw new Error(`the revisions of ${storyKey} stayed locked for ${2 * turnTtlMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    try {
      return await work();
    } finally {
      await redis.eval(UNLOCK, 1, key, token).catch((error: unknown) => this.args.logError(`unlocking ${storyKey}`, error));
    }
  }
}

function parseJob(entry: string): StoryJob | undefined {
  try {
    return readStoryJob(JSON.parse(entry));
  } catch {
    return undefined;
  }
}
