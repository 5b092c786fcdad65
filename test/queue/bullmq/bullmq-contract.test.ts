import { randomBytes } from "node:crypto";
import { openStoryQueue, type QueueConfig } from "../../../src/queue/index.js";
import { BullmqQueue } from "../../../src/queue/bullmq/index.js";
import { redisForFile } from "../../support/redis.js";
import { describeQueueContract } from "../contract.js";

/**
 * Leases short enough that a killed worker's job is taken over in seconds, and a TTL ten
 * heartbeats long, so a live worker starved of CPU on a loaded machine keeps its job.
 */
const LEASE = { lockTtlMs: 10_000, heartbeatMs: 1000 };

const redis = redisForFile();

describeQueueContract("bullmq", async () => {
  // A key prefix per test: each test has its own queue on the one server.
  const prefix = `t${randomBytes(4).toString("hex")}`;
  const config = (options?: { concurrency?: number; installationSlots?: number }): QueueConfig => ({
    kind: "redis",
    url: redis.url,
    concurrency: options?.concurrency ?? 1,
    lease: LEASE,
    prefix,
    ...(options?.installationSlots ? { installationSlots: options.installationSlots } : {}),
  });
  return {
    open: (options) => {
      const opened = config(options);
      if (!options?.crashPoint || opened.kind !== "redis") return openStoryQueue(opened);
      return BullmqQueue.open({ ...opened, crashPoint: options.crashPoint });
    },
    childConfig: () => config(),
    dispose: async () => undefined,
  };
});
