/** What only the BullMQ adapter has: its URL, its validation on write, the test server's install hint. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStoryQueue, type StoryQueue } from "../../../src/queue/index.js";
import { parseRedisUrl } from "../../../src/queue/bullmq/index.js";
import { redisForFile, redisServerPath } from "../../support/redis.js";
import { cleanupAfterEach, makeJob } from "../helpers.js";

describe("BullMQ adapter", () => {
  const redis = redisForFile();
  const cleanup = cleanupAfterEach();

  it("reads HARNESS_QUEUE as a Redis URL, naming the variable and hiding the password", () => {
    expect(parseRedisUrl("redis://localhost:6379/0").display).toBe("redis://localhost:6379/0");
    expect(parseRedisUrl("redis://:s3cret@cache:6380/2").display).toBe("redis://:***@cache:6380/2");
    expect(() => parseRedisUrl("http://cache:6379")).toThrow(/HARNESS_QUEUE must start with redis:\/\/ or rediss:\/\//);
    expect(() => parseRedisUrl("redis://cache:6379/zero")).toThrow(/HARNESS_QUEUE: the database must be a number/);
    expect(() => parseRedisUrl("cache:6379")).toThrow(/HARNESS_QUEUE/);
  });

  it("says where Redis is when it cannot be reached, without the password", async () => {
    const closed = `redis://:pw@127.0.0.1:1/0`;
    await expect(openStoryQueue({ kind: "redis", url: closed, concurrency: 1 })).rejects.toThrow(/cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0/);
  });

  it("refuses to write a job that is not a story job, naming the field", async () => {
    const queue = await openStoryQueue({ kind: "redis", url: redis.url, concurrency: 1, prefix: "validation" });
    cleanup(() => queue.close());
    const bad = { ...makeJob(1), installationId: "one" } as unknown as ReturnType<typeof makeJob>;
    await expect(queue.enqueue(bad)).rejects.toThrow(/\$\.installationId/);
    expect(await queue.snapshot()).toEqual([]);
  });

  it("queues a delivery given to two processes at once, or a story given two deliveries at once, as one job accepted at most once", async () => {
    const opened = await Promise.all([1, 2].map(() => openStoryQueue({ kind: "redis", url: redis.url, concurrency: 1, prefix: "together" })));
    try {
      const [first, second] = opened as [StoryQueue, StoryQueue];
      // One of the two may see the other's job before either remembered the delivery: then it says the story is active.
      const same = await Promise.all([first.enqueue(makeJob(1, "d-1")), second.enqueue(makeJob(1, "d-1"))]);
      expect(same.filter((outcome) => outcome.accepted).length).toBeLessThanOrEqual(1);
      expect(same.filter((outcome) => !outcome.accepted).length).toBeGreaterThanOrEqual(1);
      const story = await Promise.all([first.enqueue(makeJob(2, "d-2")), second.enqueue(makeJob(2, "d-3"))]);
      expect(story.filter((outcome) => outcome.accepted)).toHaveLength(1);
      expect(story.find((outcome) => !outcome.accepted)).toEqual({ accepted: false, reason: "already-active" });
      expect((await first.snapshot()).map((view) => [view.job.issue.number, view.job.deliveryId])).toEqual([
        [1, "d-1"],
        [2, expect.stringMatching(/^d-[23]$/)],
      ]);
      // Both deliveries of issue 1 are remembered: a third try is a repeat.
      expect(await second.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    } finally {
      for (const queue of opened) await queue.close();
    }
  });

  it("fails a test that needs redis-server on a machine without it, saying how to install it", () => {
    const empty = mkdtempSync(join(tmpdir(), "harness-no-redis-"));
    try {
      expect(() => redisServerPath({ PATH: empty })).toThrow("apt-get install -y redis-server");
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
