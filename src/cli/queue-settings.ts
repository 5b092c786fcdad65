import { join } from "node:path";
import { parseRedisUrl, QueueUrlError, type QueueConfig } from "../queue/index.js";
import { positiveInteger, UsageError } from "./usage.js";

export const QUEUE_VARIABLES = "HARNESS_QUEUE, HARNESS_WORKER, HARNESS_INSTALLATION_SLOTS, HARNESS_LEASE_MS";

/** Which queue a process opens, and whether `harness serve` runs stories itself. */
export interface QueueSettings {
  queue: QueueConfig;
  /** For `harness serve`: run stories in this process too (always with the embedded queue). */
  serveRunsJobs: boolean;
}

/**
 * Reads the queue's variables, naming the one that is wrong:
 * `HARNESS_QUEUE` (unset: the embedded queue in `<home>/queue`; `redis://…`: BullMQ),
 * `HARNESS_WORKER` (`on`/`off`: whether `serve` on Redis also runs stories; default off),
 * `HARNESS_INSTALLATION_SLOTS` (stories of one installation running at once, across workers),
 * `HARNESS_LEASE_MS` (Redis: how long a worker's lease on a story lasts without a heartbeat).
 */
export function readQueueSettings(env: NodeJS.ProcessEnv, args: { harnessHome: string; concurrency: number; usage: string }): QueueSettings {
  const url = env.HARNESS_QUEUE?.trim() || undefined;
  const worker = env.HARNESS_WORKER?.trim().toLowerCase() || undefined;
  if (worker !== undefined && worker !== "on" && worker !== "off") throw new UsageError(`HARNESS_WORKER must be 'on' or 'off', got '${worker}'`, args.usage);
  const installationSlots = positiveInteger("HARNESS_INSTALLATION_SLOTS", env.HARNESS_INSTALLATION_SLOTS?.trim() || undefined);
  const leaseMs = positiveInteger("HARNESS_LEASE_MS", env.HARNESS_LEASE_MS?.trim() || undefined);
  const slots = installationSlots === undefined ? {} : { installationSlots };
  if (url === undefined) {
    if (worker === "off") throw new UsageError("HARNESS_WORKER=off needs HARNESS_QUEUE: with the embedded queue the App runs its own stories", args.usage);
    if (leaseMs !== undefined) throw new UsageError("HARNESS_LEASE_MS applies to HARNESS_QUEUE=redis://… only", args.usage);
    return { queue: { kind: "embedded", dir: join(args.harnessHome, "queue"), concurrency: args.concurrency, ...slots }, serveRunsJobs: true };
  }
  try {
    parseRedisUrl(url);
  } catch (error) {
    if (error instanceof QueueUrlError) throw new UsageError(error.message, args.usage);
    throw error;
  }
  if (leaseMs !== undefined && leaseMs < 1000) throw new UsageError(`HARNESS_LEASE_MS must be at least 1000, got '${leaseMs}'`, args.usage);
  const lease = leaseMs === undefined ? {} : { lease: { lockTtlMs: leaseMs, heartbeatMs: Math.max(200, Math.floor(leaseMs / 3)) } };
  return { queue: { kind: "redis", url, concurrency: args.concurrency, ...slots, ...lease }, serveRunsJobs: worker === "on" };
}
