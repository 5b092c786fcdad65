import { randomBytes } from "node:crypto";
import { openStoryQueue, type QueueConfig } from "../../src/queue/index.js";
import { startRedis, type RedisServer } from "../support/redis.js";
import { describeQueueContract } from "./contract.js";

/** Short leases so a killed worker's job is taken over in seconds; the waits poll far longer. */
const LEASE = { lockTtlMs: 3000, heartbeatMs: 500 };

let redis: RedisServer | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describeQueueContract("bullmq", async () => {
  const server = redis;
  if (!server) throw new Error("redis-server did not start");
  // A key prefix per test: each test has its own queue on the one server.
  const prefix = `t${randomBytes(4).toString("hex")}`;
  const config = (options?: { concurrency?: number; installationSlots?: number }): QueueConfig => ({
    kind: "redis",
    url: server.url,
    concurrency: options?.concurrency ?? 1,
    lease: LEASE,
    prefix,
    ...(options?.installationSlots ? { installationSlots: options.installationSlots } : {}),
  });
  return {
    open: (options) => openStoryQueue(config(options)),
    childConfig: () => config(),
    dispose: async () => undefined,
  };
});
