/**
 * The Redis adapter's pending revisions (src/queue/bullmq/redis-pending.ts) where a worker dies at
 * the worst moment: a batch whose story's job is gone (its worker died as the job ended, before it
 * looked at the batch) is queued by the next worker that starts; an entry that is not a revise job
 * is dropped, the rest still run. Against a real redis-server; waits poll under hang guards.
 */
import { jest } from "@jest/globals";
import { Queue } from "bullmq";
import { BullmqQueue, storyJobId } from "../../../src/queue/bullmq/index.js";
import type { JobLease, StoryJob } from "../../../src/queue/index.js";
import { redisForFile } from "../../support/redis.js";
import { until } from "../../support/poll.js";
import { cleanupAfterEach, makeJob } from "../helpers.js";

jest.setTimeout(300_000);

const LEASE = { lockTtlMs: 10_000, heartbeatMs: 500 };
const server = redisForFile();
const cleanup = cleanupAfterEach();

async function open(prefix: string): Promise<{ queue: BullmqQueue; errors: string[] }> {
  const errors: string[] = [];
  const queue = await BullmqQueue.open({ url: server.url, prefix, lease: LEASE, log: { error: (message) => errors.push(message) } });
  cleanup(() => queue.close({ abortRunning: true }));
  return { queue, errors };
}

function reviseJob(issue: number, deliveryId: string, reviewId: number): StoryJob {
  return {
    ...makeJob(issue, deliveryId, { kind: "revise" }),
    pullNumber: 100 + issue,
    revision: { triggers: [{ kind: "review", by: "writer", id: reviewId, body: `review ${reviewId}`, comments: [] }] },
  };
}

/** The story's BullMQ job removed as a worker that died right after its run ended leaves it (finished, its batch not looked at). */
async function dropJob(prefix: string, issue: number): Promise<void> {
  const raw = new Queue("stories", { connection: { url: server.url }, prefix });
  try {
    await raw.remove(storyJobId(makeJob(issue).storyKey));
  } finally {
    await raw.close();
  }
}

describe("BullMQ adapter: pending revisions", () => {
  it("queues a batch left without a job when a worker starts, as one round, and drops an entry that is not a revise job", async () => {
    const { queue: serve } = await open("p-orphan");
    expect(await serve.enqueue(makeJob(1, "d-1"))).toMatchObject({ accepted: true });
    expect(await serve.enqueue(reviseJob(1, "review-a", 11))).toMatchObject({ accepted: true, batched: true });
    expect(await serve.enqueue(reviseJob(1, "review-b", 12))).toMatchObject({ accepted: true, batched: true });
    await server.client.rpush("p-orphan:stories:harness:pending:acme/widgets#1", JSON.stringify(makeJob(1, "not-a-revise")), "{not json");
    await dropJob("p-orphan", 1);
    expect(await serve.isActive("acme/widgets#1")).toBe(false);
    expect(await server.client.smembers("p-orphan:stories:harness:pending-stories")).toEqual(["acme/widgets#1"]);

    const { queue: worker, errors } = await open("p-orphan");
    const leases: JobLease[] = [];
    worker.start(async (lease) => {
      leases.push(lease);
    });
    await until("the batch to run", () => leases.length === 1);
    await until("story inactive", async () => !(await worker.isActive("acme/widgets#1")));
    expect(leases[0]).toMatchObject({ interruptions: 0, job: { kind: "revise", deliveryId: "review-a" } });
    expect(leases[0]!.job.revision?.triggers.map((trigger) => (trigger.kind === "ci" ? trigger.suiteId : trigger.id))).toEqual([11, 12]);
    expect(errors.filter((line) => line.includes("dropped an entry that is not a revise job"))).toHaveLength(2);
    expect(await server.client.exists("p-orphan:stories:harness:pending:acme/widgets#1")).toBe(0);
    expect(await server.client.smembers("p-orphan:stories:harness:pending-stories")).toEqual([]);
  });

  it("queues a trigger at once, with what a gone job left, when the story has no job", async () => {
    const { queue } = await open("p-free");
    await queue.enqueue(makeJob(2, "d-2"));
    expect(await queue.enqueue(reviseJob(2, "review-c", 21))).toMatchObject({ accepted: true, batched: true });
    await dropJob("p-free", 2);
    // No worker looked at the batch yet: the next trigger takes it along into its own round.
    expect(await queue.enqueue(reviseJob(2, "review-d", 22))).toEqual({ accepted: true, jobId: storyJobId("acme/widgets#2") });
    const [view] = await queue.snapshot();
    expect(view?.job.revision?.triggers.map((trigger) => (trigger.kind === "ci" ? trigger.suiteId : trigger.id))).toEqual([21, 22]);
    expect(await server.client.exists("p-free:stories:harness:pending:acme/widgets#2")).toBe(0);
  });
});
