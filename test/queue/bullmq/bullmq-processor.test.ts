/**
 * What a BullMQ worker does with one job (src/queue/bullmq/processor.ts), against a real
 * redis-server: a job whose installation has no free slot waits `slotRetryMs` (read from the
 * job BullMQ keeps), a running job renews its slot, a job's start count is forgotten once it
 * finished, a job stopped by shutdown is handed back at once, and failures of Redis steps are
 * logged naming the job. A failing Redis step is a key of the wrong type, set by the test.
 * Waits poll under generous hang guards; nothing depends on timing.
 */
import { jest } from "@jest/globals";
import { Queue } from "bullmq";
import { BullmqQueue, storyJobId } from "../../../src/queue/bullmq/index.js";
import type { JobLease } from "../../../src/queue/index.js";
import { storyJobIssues } from "../../../src/queue/bullmq/redis-quarantine.js";
import { redisForFile } from "../../support/redis.js";
import { cleanupAfterEach, deferred, makeJob } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(300_000);

const LEASE = { lockTtlMs: 10_000, heartbeatMs: 500 };
const server = redisForFile();
const cleanup = cleanupAfterEach();

async function open(
  prefix: string,
  options: { installationSlots?: number; slotRetryMs?: number; concurrency?: number } = {},
): Promise<{ queue: BullmqQueue; errors: string[]; raw: Queue }> {
  const errors: string[] = [];
  const queue = await BullmqQueue.open({ url: server.url, prefix, lease: LEASE, ...options, log: { error: (message) => errors.push(message) } });
  const raw = new Queue("stories", { connection: { url: server.url }, prefix });
  cleanup(
    () => queue.close({ abortRunning: true }),
    () => raw.close(),
  );
  return { queue, errors, raw };
}

const ID_1 = storyJobId("acme/widgets#1");
const ID_2 = storyJobId("acme/widgets#2");

describe("BullMQ adapter: one job on a worker", () => {
  it("sets a job aside for slotRetryMs while its installation's slots are taken", async () => {
    const { queue, raw } = await open("p-slots", { installationSlots: 1, slotRetryMs: 600_000, concurrency: 2 });
    const release = deferred();
    const ran: number[] = [];
    queue.start(async (lease, signal) => {
      ran.push(lease.job.issue.number);
      await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done, { once: true }))]);
    });
    await queue.enqueue(makeJob(1));
    await until("the first job running", () => ran.length === 1);
    await queue.enqueue(makeJob(2));
    await until("the second job set aside", async () => (await raw.getJob(ID_2))?.delay !== 0 && (await raw.getJobState(ID_2)) === "delayed");
    expect((await raw.getJob(ID_2))?.delay).toBeGreaterThan(500_000);
    expect(ran).toEqual([1]);
    expect(await queue.slots.holders(1)).toEqual([ID_1]);
    release.resolve();
    await until("the first job's slot released", async () => (await queue.slots.holders(1)).length === 0);
  });

  it("renews its slot while it runs, and logs a renewal or release that fails without failing the job", async () => {
    const { queue, errors } = await open("p-renew", { installationSlots: 1 });
    const release = deferred();
    const leases: JobLease[] = [];
    queue.start(async (lease, signal) => {
      leases.push(lease);
      await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done, { once: true }))]);
    });
    await queue.enqueue(makeJob(1));
    await until("the job running", () => leases.length === 1);
    const slotKey = "p-renew:stories:harness:slots:1";
    const first = Number(await server.client.zscore(slotKey, ID_1));
    await until("the slot renewed", async () => Number(await server.client.zscore(slotKey, ID_1)) > first);
    // A slot key Redis refuses to update: the heartbeat's renewal and the release fail.
    await server.client.set(slotKey, "not a sorted set");
    await until("the failed renewal logged", () => errors.some((line) => line.startsWith(`queue (redis): heartbeat of ${ID_1}: WRONGTYPE`)));
    release.resolve();
    await until("the failed release logged", () => errors.some((line) => line.startsWith(`queue (redis): slot of ${ID_1}: WRONGTYPE`)));
    await until("the job finished", async () => !(await queue.isActive("acme/widgets#1")));
  });

  it("logs a story that throws, finishes its job, and forgets its start count", async () => {
    const { queue, errors } = await open("p-throws");
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
      if (leases.length === 1) throw new Error("the story broke");
    });
    await queue.enqueue(makeJob(1, "d-1"));
    await until("the story run", async () => leases.length === 1 && !(await queue.isActive("acme/widgets#1")));
    expect(errors).toContain(`queue (redis): job ${ID_1}: the story broke`);
    expect(await server.client.hexists("p-throws:stories:harness:runs", ID_1)).toBe(0);
    expect((await queue.enqueue(makeJob(1, "d-2"))).accepted).toBe(true);
    await until("the story run again", () => leases.length === 2);
    expect(leases.map((lease) => lease.interruptions)).toEqual([0, 0]);
  });

  it("hands a job stopped by shutdown back to the waiting list before close returns", async () => {
    const { queue } = await open("p-back");
    const entered = deferred();
    queue.start(async (_lease, signal) => {
      entered.resolve();
      await new Promise<void>((done) => signal.addEventListener("abort", () => done(), { once: true }));
    });
    await queue.enqueue(makeJob(1));
    await entered.promise;
    expect(await server.client.hget("p-back:stories:harness:runs", ID_1)).toBe("1");
    await queue.close({ abortRunning: true });
    const { queue: other, raw } = await open("p-back");
    // Waiting by its priority (a start), not active under this worker's lock until it expires.
    expect(await raw.getJobState(ID_1)).toBe("prioritized");
    expect((await other.snapshot()).map((view) => [view.state, view.interruptions])).toEqual([["queued", 1]]);
  });

  it("retries setting aside a job Redis would not keep, then tells it once kept", async () => {
    const { queue, errors, raw } = await open("p-aside", { slotRetryMs: 1000 });
    const told: string[] = [];
    queue.listen({ onQuarantine: (quarantined) => told.push(quarantined.file) });
    queue.start(async () => undefined);
    const quarantineKey = "p-aside:stories:harness:quarantine";
    await server.client.set(quarantineKey, "not a hash");
    await raw.add("story", { ...makeJob(5), kind: "rebuild" }, { jobId: "story-5" });
    await until("the failed set-aside logged", () =>
      errors.some((line) => line.startsWith("queue (redis): job story-5: its data is not a story job ($.kind must be one of")),
    );
    expect(errors.find((line) => line.startsWith("queue (redis): job story-5:"))).toMatch(/\) and could not be set aside \(WRONGTYPE .*\); tried again$/);
    expect((await raw.getJob("story-5"))?.delay).toBeGreaterThan(0);
    expect(told).toEqual([]);
    await server.client.del(quarantineKey);
    await until("the job set aside", () => told.length === 1);
    expect(errors).toContain(
      `queue (redis): quarantine: job story-5 (story acme/widgets#5) set aside in the Redis hash ${quarantineKey}, field ${told[0] ?? ""}: $.kind must be one of "start", "retry-blocked", "revise"`,
    );
    await raw.add("story", { note: "not a story" }, { jobId: "foreign" });
    await until("the foreign job set aside", () => told.length === 2);
    expect(errors).toContain(
      `queue (redis): quarantine: job foreign set aside in the Redis hash ${quarantineKey}, field ${told[1] ?? ""}: ${storyJobIssues({ note: "not a story" })}`,
    );
  });
});
