/**
 * Opening the BullMQ adapter and what `enqueue` answers (src/queue/bullmq/bullmq-queue.ts, up
 * to `liveJob`), against a real redis-server: the options it fills in, its connections' retry
 * policy and error logs, the delivery memory, the job it writes, and the answers another
 * process's writes cause. Those races are staged: the test writes, at `crashPoint` (between
 * the job and its delivery ids), what the other process would have written.
 * Every test settles quickly when something is wrong: short leases, small `closeGraceMs`, and
 * opening and closing under hang guards that fail instead of waiting.
 */
import { jest } from "@jest/globals";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { BullmqQueue, DEFAULT_DELIVERY_MEMORY_MS, storyJobId, type BullmqQueueOptions } from "../../../src/queue/bullmq/index.js";
import { reconnectDelay } from "../../../src/queue/bullmq/bullmq-queue.js";
import type { StoryJob } from "../../../src/queue/index.js";
import { redisForFile } from "../../support/redis.js";
import { cleanupAfterEach, GUARD_MS, makeJob, within } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(60_000);

const LEASE = { lockTtlMs: 4000, heartbeatMs: 200 };
const server = redisForFile();
const cleanup = cleanupAfterEach();

async function open(prefix: string | undefined, options: Partial<BullmqQueueOptions> = {}): Promise<{ queue: BullmqQueue; errors: string[]; raw: Queue }> {
  const errors: string[] = [];
  const queue = await within(
    "open",
    BullmqQueue.open({
      url: server.url,
      ...(prefix ? { prefix } : {}),
      lease: LEASE,
      closeGraceMs: 1000,
      log: { error: (message) => errors.push(message) },
      ...options,
    }),
  );
  // Closed while waiting to reconnect (the connection test drops it), its socket is closed already: ioredis's
  // disconnect timer (2 s by default) then held the file's process after the run ("Jest did not exit").
  const raw = new Queue("stories", { connection: { url: server.url, disconnectTimeout: 0 }, prefix: prefix ?? "harness" });
  cleanup(
    () => queue.close({ abortRunning: true }),
    () => raw.close(),
  );
  return { queue, errors, raw };
}

const ID_1 = storyJobId("acme/widgets#1");

describe("BullMQ adapter: opening", () => {
  it("reconnects backing off up to two seconds, and not once closing", () => {
    for (const open of [{}, { closing: false }]) {
      expect([1, 2, 3, 9, 10, 11, 50].map((times) => reconnectDelay(open, times))).toEqual([200, 400, 600, 1800, 2000, 2000, 2000]);
    }
    expect(reconnectDelay({ closing: true }, 1)).toBeNull();
  });

  it("says why Redis cannot be reached, with the password hidden", async () => {
    // The socket's error, not the connection's closing; node's errors fail jest's `instanceof Error`, hence the optional "Error: ".
    await expect(within("open", BullmqQueue.open({ url: "redis://:pw@127.0.0.1:1/0" }))).rejects.toThrow(
      /^HARNESS_QUEUE: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0: (Error: )?connect ECONNREFUSED 127\.0\.0\.1:1$/,
    );
  });

  it("keeps its jobs and keys under the harness prefix unless told", async () => {
    const { queue } = await open(undefined);
    expect(await queue.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: true, jobId: ID_1 });
    expect(await server.client.exists(`harness:stories:${ID_1}`, "harness:stories:harness:delivery:d-1")).toBe(2);
    expect(await queue.isActive("acme/widgets#1")).toBe(true);
  });

  it("shows a worker's report as live for three renewals (reportEveryMs, else the heartbeat)", async () => {
    const { queue: slow } = await open("o-report", { lease: { lockTtlMs: 10_000, heartbeatMs: 200 }, reportEveryMs: 2000 });
    const { queue: plain } = await open("o-report-plain", { lease: { lockTtlMs: 10_000, heartbeatMs: 1000 } });
    const now = await server.now();
    const liveAt = async (queue: BullmqQueue, prefix: string, renewedAt: number): Promise<boolean | undefined> => {
      await queue.reports.publish({ quarantined: [], undelivered: [] }, [], "/srv/report");
      await server.client.zadd(`${prefix}:stories:harness:workers`, renewedAt, queue.reports.self);
      return (await queue.workerReports())[0]?.live;
    };
    // Two renewals ago (of 2 s each) is live; the heartbeat's three renewals (600 ms) would not be.
    expect(await liveAt(slow, "o-report", now - 4000)).toBe(true);
    expect(await liveAt(slow, "o-report", now - 60_000)).toBe(false);
    // Without reportEveryMs: three heartbeats (3 s); a renewal stamped ahead of Redis's clock is live.
    expect(await liveAt(plain, "o-report-plain", now + 1000)).toBe(true);
    expect(await liveAt(plain, "o-report-plain", now - 60_000)).toBe(false);
  });
});

describe("BullMQ adapter: its connections", () => {
  it("reconnects when Redis drops them, and logs each connection's errors while it refuses them", async () => {
    const { queue, errors } = await open("c-drop");
    const watcher = new Redis(server.url);
    try {
      // Every other client is dropped (this one is skipped); the queue's connections come back.
      await watcher.call("CLIENT", "KILL", "TYPE", "normal");
      expect(await within("an enqueue after the drop", queue.enqueue(makeJob(1, "d-1")))).toEqual({ accepted: true, jobId: ID_1 });
      expect(await within("isActive after the drop", queue.isActive("acme/widgets#1"))).toBe(true);
      // Redis now refuses every new client: each connection's failed reconnections are logged, named.
      await watcher.config("SET", "maxclients", "1");
      // The file's client too (made again at its next use).
      server.dropClient();
      await watcher.call("CLIENT", "KILL", "TYPE", "normal");
      await until(
        "the redis and queue connections' errors logged",
        () => ["redis", "queue"].every((where) => errors.some((line) => line.startsWith(`queue (redis): ${where}: `))),
        GUARD_MS,
      );
    } finally {
      await watcher.config("SET", "maxclients", "10000");
      watcher.disconnect();
    }
    expect(await within("an enqueue once Redis takes clients again", queue.enqueue(makeJob(2, "d-2")))).toEqual({
      accepted: true,
      jobId: storyJobId("acme/widgets#2"),
    });
  });
});

describe("BullMQ adapter: enqueue", () => {
  it("writes one job named story per story, re-admissions first, and remembers its delivery and event for deliveryMemoryMs", async () => {
    const { queue, raw } = await open("e-write", { deliveryMemoryMs: 120_000 });
    expect(await queue.isActive("acme/widgets#1")).toBe(false);
    expect(await queue.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: true, jobId: ID_1 });
    expect(await queue.enqueue({ ...makeJob(2, "d-2", { kind: "retry-blocked" }), eventKey: "issues.labeled:2" })).toEqual({
      accepted: true,
      jobId: storyJobId("acme/widgets#2"),
    });
    const first = await raw.getJob(ID_1);
    const second = await raw.getJob(storyJobId("acme/widgets#2"));
    expect([first?.name, first?.data.deliveryId, first?.opts.priority]).toEqual(["story", "d-1", 2]);
    expect([second?.name, second?.opts.priority]).toEqual(["story", 1]);
    expect(await queue.isActive("acme/widgets#1")).toBe(true);
    for (const key of ["d-1", "d-2", "event:issues.labeled:2"]) {
      const ttl = await server.client.pttl(`e-write:stories:harness:delivery:${key}`);
      expect(ttl).toBeGreaterThan(60_000);
      expect(ttl).toBeLessThanOrEqual(120_000);
    }
    expect(await server.client.get("e-write:stories:harness:delivery:d-1")).toBe("acme/widgets#1");
    // No event key: only the delivery is remembered, so another story's delivery is not a repeat.
    expect(await server.client.keys("e-write:stories:harness:delivery:*")).toHaveLength(3);
    expect(await queue.enqueue(makeJob(3, "d-3"))).toEqual({ accepted: true, jobId: storyJobId("acme/widgets#3") });
    // The same event under a new delivery id is a repeat; so is the same delivery.
    expect(await queue.enqueue({ ...makeJob(2, "d-9"), eventKey: "issues.labeled:2" })).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await queue.enqueue(makeJob(4, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await raw.getJob(storyJobId("acme/widgets#4"))).toBeUndefined();
    // A new delivery of a queued story: refused as active, and remembered.
    expect(await queue.enqueue(makeJob(1, "d-5"))).toEqual({ accepted: false, reason: "already-active" });
    expect(await queue.enqueue(makeJob(1, "d-5"))).toEqual({ accepted: false, reason: "duplicate-delivery" });

    const { queue: week } = await open("e-week");
    await week.enqueue(makeJob(1, "d-1"));
    expect(await server.client.pttl("e-week:stories:harness:delivery:d-1")).toBeGreaterThan(DEFAULT_DELIVERY_MEMORY_MS - 3_600_000);
    await queue.close();
    await expect(queue.enqueue(makeJob(9))).rejects.toThrow(new Error("queue is closed"));
  });

  it("forgets a finished or failed job, so a new delivery queues the story again and a repeat queues nothing", async () => {
    const { queue, raw } = await open("e-done");
    const ran: string[] = [];
    queue.start(async (lease) => {
      ran.push(lease.job.deliveryId);
    });
    await queue.enqueue(makeJob(1, "d-1"));
    await until("the story run and finished", async () => ran.length === 1 && !(await queue.isActive("acme/widgets#1")), GUARD_MS);
    expect(await raw.getJob(ID_1)).toBeUndefined();
    expect(await queue.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await raw.getJob(ID_1)).toBeUndefined();
    // Its start count is a string now: the worker's count fails, and BullMQ fails the job.
    await server.client.set("e-done:stories:harness:runs", "not a hash");
    expect(await queue.enqueue(makeJob(1, "d-2"))).toEqual({ accepted: true, jobId: ID_1 });
    await until("the job failed and gone", async () => (await raw.getJob(ID_1)) === undefined, GUARD_MS);
    expect(await raw.getJobCounts("failed", "completed")).toEqual({ failed: 0, completed: 0 });
    await server.client.del("e-done:stories:harness:runs");
    expect(await queue.enqueue(makeJob(1, "d-3"))).toEqual({ accepted: true, jobId: ID_1 });
    await until("the story run again", () => ran.length === 2, GUARD_MS);
    expect(ran).toEqual(["d-1", "d-3"]);
  });

  it("does not count a job kept finished (added with removeOnComplete: false) as active", async () => {
    const { queue, raw } = await open("e-kept");
    await raw.add("story", makeJob(1, "d-1"), { jobId: ID_1, removeOnComplete: false });
    queue.start(async () => undefined);
    await until("the job completed and kept", async () => (await raw.getJobState(ID_1)) === "completed", GUARD_MS);
    expect(await queue.isActive("acme/widgets#1")).toBe(false);
  });

  it("says already-active, and remembers the delivery, when a process died after adding the job but before remembering it", async () => {
    const { queue, raw } = await open("e-crashed");
    await raw.add("story", makeJob(1, "d-1"), { jobId: ID_1, priority: 2 });
    expect(await queue.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "already-active" });
    expect(await queue.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
  });

  describe("when another process writes between the job and its delivery ids (staged at crashPoint)", () => {
    async function racing(
      prefix: string,
      other: (raw: Queue) => Promise<unknown>,
    ): Promise<{ outcome: Awaited<ReturnType<BullmqQueue["enqueue"]>>; raw: Queue }> {
      const { queue, raw } = await open(prefix, {
        crashPoint: async () => {
          await other(raw);
        },
      });
      return { outcome: await queue.enqueue(makeJob(1, "d-1")), raw };
    }

    it("says duplicate-delivery when the other process remembered the delivery first", async () => {
      const { outcome, raw } = await racing("r-seen", () => server.client.set("r-seen:stories:harness:delivery:d-1", "acme/widgets#1"));
      expect(outcome).toEqual({ accepted: false, reason: "duplicate-delivery" });
      expect((await raw.getJob(ID_1))?.data.deliveryId).toBe("d-1");
    });

    it("says already-active when another delivery's job holds the story's id", async () => {
      const other: StoryJob = makeJob(1, "d-other");
      const { outcome, raw } = await racing("r-other", async (opened) => {
        await opened.remove(ID_1);
        await opened.add("story", other, { jobId: ID_1 });
      });
      expect(outcome).toEqual({ accepted: false, reason: "already-active" });
      expect((await raw.getJob(ID_1))?.data.deliveryId).toBe("d-other");
    });

    it("accepts when its job already ran and is gone", async () => {
      const { outcome } = await racing("r-gone", (opened) => opened.remove(ID_1));
      expect(outcome).toEqual({ accepted: true, jobId: ID_1 });
    });
  });
});
