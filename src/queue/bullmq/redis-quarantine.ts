/**
 * Jobs whose data is not a story job (written by another version, damaged, or put there by
 * hand) are set aside in Redis rather than dropped: kept whole in one hash with the reason (the
 * schema's words, naming the field), the worker that found it and what could be read of its
 * story, so an operator sees them in `harness status` from any machine and the story is told.
 */
import type { Redis } from "ioredis";
import { schemas } from "../../schema/index.js";
import { salvageJobStory, type QuarantinedJob, type QuarantinedStory } from "../quarantine.js";

/** Characters of a reason kept (a schema lists every issue; the first ones name the field). */
const REASON_CHARS = 2000;
/** Entries `list` returns, newest first; the rest are counted. */
export const QUARANTINE_LISTED = 100;

/** One job set aside, as stored (validated against `queue-quarantined-job`). */
export interface QuarantineRecord {
  /** Its field in the hash: the BullMQ job id and when it was set aside, so none replaces another. */
  entry: string;
  jobId: string;
  reason: string;
  /** The worker that found it ({@link WorkerReports.self}). */
  worker: string;
  at: string;
  story?: QuarantinedStory;
  /** The job's data as BullMQ held it, JSON. */
  data: string;
}

/** Why `data` is not a story job: each schema issue with the field it names. */
export function storyJobIssues(data: unknown): string {
  const issues = schemas().issues("queue-story-job", data);
  return (
    issues
      .map((issue) => `${issue.path} ${issue.message}`)
      .join("; ")
      .slice(0, REASON_CHARS) || "not a story job"
  );
}

export class RedisQuarantine {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    /** Where the entries are kept, in the words an operator is told. */
    private readonly keptIn = `the Redis hash ${key}`,
  ) {}

  /** Sets a job's data aside; resolves once Redis holds it (the job may then be removed). */
  async put(args: { jobId: string; data: unknown; reason: string; worker: string }): Promise<QuarantinedJob & { kept: string }> {
    const at = new Date();
    const story = salvageJobStory(args.data);
    const record: QuarantineRecord = {
      entry: `${args.jobId}.${at.getTime()}`,
      jobId: args.jobId,
      reason: args.reason.slice(0, REASON_CHARS),
      worker: args.worker,
      at: at.toISOString(),
      ...(story ? { story } : {}),
      data: JSON.stringify(args.data) ?? "null",
    };
    schemas().validate("queue-quarantined-job", record, `quarantine record of ${args.jobId}`);
    await this.redis.hset(this.key, record.entry, JSON.stringify(record));
    return { file: record.entry, reason: record.reason, kept: `${this.keptIn}, field ${record.entry}`, ...(story ? { story } : {}) };
  }

  /** The newest {@link QUARANTINE_LISTED} records (damaged ones left out) and how many there are in all. */
  async list(): Promise<{ records: QuarantineRecord[]; total: number }> {
    const all = await this.redis.hgetall(this.key);
    const records = Object.values(all)
      .map((text) => schemas().parseValid<QuarantineRecord>("queue-quarantined-job", text))
      .filter((record): record is QuarantineRecord => record !== undefined)
      .sort((a, b) => b.at.localeCompare(a.at));
    return { records: records.slice(0, QUARANTINE_LISTED), total: Object.keys(all).length };
  }
}
