/** `openStoryQueue` with the BullMQ adapter: every setting of the configuration reaches the queue. */
import { openStoryQueue, type StoryQueue } from "../../../src/queue/index.js";
import { BullmqQueue } from "../../../src/queue/bullmq/index.js";
import { startRedis, type RedisServer } from "../../support/redis.js";
import { makeJob } from "../helpers.js";
import { until } from "../../support/poll.js";

describe("openStoryQueue (redis)", () => {
  let redis: RedisServer | undefined;
  /** Undefined only under a mutation that opens nothing: then the test fails, not the teardown. */
  const opened: Array<StoryQueue | undefined> = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const queue of opened.splice(0)) await queue?.close();
    await redis?.stop();
  });
  const url = (): string => redis?.url ?? "";

  it("opens the server's queue with its concurrency, installation slots, lease and prefix", async () => {
    const queue = await openStoryQueue({
      kind: "redis",
      url: url(),
      concurrency: 3,
      installationSlots: 2,
      lease: { lockTtlMs: 9000, heartbeatMs: 900 },
      prefix: "settings",
    });
    opened.push(queue);
    expect(queue).toBeInstanceOf(BullmqQueue);
    const bullmq = queue as BullmqQueue;
    expect([bullmq.concurrency, bullmq.slots.limit, bullmq.lease]).toEqual([3, 2, { lockTtlMs: 9000, heartbeatMs: 900 }]);
    expect((await queue.enqueue(makeJob(1, "d-1"))).accepted).toBe(true);
    // Another prefix is another queue on the same server: it sees no job and takes the same delivery.
    const other = await openStoryQueue({ kind: "redis", url: url(), concurrency: 1, prefix: "settings-other" });
    opened.push(other);
    expect(await other.snapshot()).toEqual([]);
    expect((await other.enqueue(makeJob(1, "d-1"))).accepted).toBe(true);
    expect((await queue.snapshot()).map((view) => view.job.deliveryId)).toEqual(["d-1"]);
  });

  it("leaves unset settings to the adapter's defaults", async () => {
    const queue = (await openStoryQueue({ kind: "redis", url: url(), concurrency: 1, prefix: "defaults" })) as BullmqQueue;
    opened.push(queue);
    expect([queue.concurrency, queue.slots.limit, queue.lease]).toEqual([1, undefined, { lockTtlMs: 30_000, heartbeatMs: 10_000 }]);
  });

  it("writes the queue's errors to the log it is given", async () => {
    const errors: string[] = [];
    const queue = await openStoryQueue({ kind: "redis", url: url(), concurrency: 1, prefix: "logged" }, { error: (message) => errors.push(message) });
    opened.push(queue);
    const outcome = await queue.enqueue(makeJob(1, "d-1"));
    if (!outcome.accepted) throw new Error(`not accepted: ${outcome.reason}`);
    queue.start(async () => {
      throw new Error("worker failed");
    });
    await until("the failure logged", () => errors.length > 0);
    expect(errors).toEqual([`queue (redis): job ${outcome.jobId}: worker failed`]);
  });
});
