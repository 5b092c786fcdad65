/**
 * The BullMQ adapter itself (src/queue/bullmq/bullmq-queue.ts) against a real redis-server:
 * its options, the order and memory of what it queues, its snapshot, the worker report it
 * shares and withdraws, the quarantine it lists, and a close that says nothing when all went
 * well and gives up on a Redis that does not answer (a server the test stops with SIGSTOP).
 * Waits poll under generous hang guards; nothing depends on timing.
 */
import { jest } from "@jest/globals";
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { Queue } from "bullmq";
import { BullmqQueue, DEFAULT_DELIVERY_MEMORY_MS, storyJobId } from "../../../src/queue/bullmq/index.js";
import { DEFAULT_LEASE_TIMING } from "../../../src/queue/index.js";
import type { LocalWork } from "../../../src/status/index.js";
import { redisForFile, startRedis } from "../../support/redis.js";
import { cleanupAfterEach, deferred, makeJob } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(300_000);

const LEASE = { lockTtlMs: 10_000, heartbeatMs: 500 };
const server = redisForFile();
const cleanup = cleanupAfterEach();

async function open(prefix: string, options: Partial<Parameters<typeof BullmqQueue.open>[0]> = {}): Promise<{ queue: BullmqQueue; errors: string[] }> {
  const errors: string[] = [];
  const queue = await BullmqQueue.open({ url: server.url, prefix, lease: LEASE, log: { error: (message) => errors.push(message) }, ...options });
  cleanup(() => queue.close({ abortRunning: true }));
  return { queue, errors };
}

const NOTHING: LocalWork = { quarantined: [], undelivered: [] };

describe("BullMQ adapter: options", () => {
  it("refuses a lease whose heartbeat is not shorter than its TTL, before it connects", async () => {
    for (const heartbeatMs of [1000, 1001]) {
      await expect(BullmqQueue.open({ url: "redis://127.0.0.1:1/0", lease: { lockTtlMs: 1000, heartbeatMs } })).rejects.toThrow(
        new RangeError("the lease heartbeat must be shorter than its TTL"),
      );
    }
    const { queue } = await open("o-lease", { lease: { lockTtlMs: 1000, heartbeatMs: 999 } });
    expect(queue.lease).toEqual({ lockTtlMs: 1000, heartbeatMs: 999 });
  });

  it("fills in the lease and runs at least one job at a time", async () => {
    const { queue: plain } = await open("o-plain", { lease: undefined });
    expect(plain.lease).toEqual(DEFAULT_LEASE_TIMING);
    expect(plain.concurrency).toBe(1);
    const { queue: partial } = await open("o-partial", { lease: { lockTtlMs: 60_000 }, concurrency: 0 });
    expect(partial.lease).toEqual({ lockTtlMs: 60_000, heartbeatMs: DEFAULT_LEASE_TIMING.heartbeatMs });
    expect(partial.concurrency).toBe(1);
    const { queue: three } = await open("o-three", { concurrency: 3 });
    expect(three.concurrency).toBe(3);
    three.start(async () => undefined);
    expect(() => three.start(async () => undefined)).toThrow("the queue's worker is already started");
  });
});

describe("BullMQ adapter: what it queues", () => {
  it("runs re-admissions first, remembers deliveries for deliveryMemoryMs, and refuses once closed", async () => {
    const { queue } = await open("e-order", { deliveryMemoryMs: 120_000 });
    await queue.enqueue(makeJob(1, "d-1"));
    await queue.enqueue(makeJob(2, "d-2", { kind: "retry-blocked" }));
    await queue.enqueue({ ...makeJob(3, "d-3"), eventKey: "issues.labeled:3" });
    expect(await queue.enqueue({ ...makeJob(3, "d-4"), eventKey: "issues.labeled:3" })).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await queue.enqueue(makeJob(1, "d-5"))).toEqual({ accepted: false, reason: "already-active" });
    // Refused as active, and remembered: the same delivery again is a repeat.
    expect(await queue.enqueue(makeJob(1, "d-5"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    for (const key of ["d-1", "d-5", "event:issues.labeled:3"]) {
      const ttl = await server.client.pttl(`e-order:stories:harness:delivery:${key}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(120_000);
    }
    expect(await queue.isActive("acme/widgets#3")).toBe(true);
    const ran: number[] = [];
    queue.start(async (lease) => {
      ran.push(lease.job.issue.number);
    });
    await until("the three jobs run", async () => ran.length === 3 && !(await queue.isActive("acme/widgets#3")));
    expect(ran).toEqual([2, 1, 3]);
    await queue.close();
    await expect(queue.enqueue(makeJob(4))).rejects.toThrow("queue is closed");

    const { queue: week } = await open("e-week");
    await week.enqueue(makeJob(1, "d-1"));
    expect(await server.client.pttl("e-week:stories:harness:delivery:d-1")).toBeGreaterThan(DEFAULT_DELIVERY_MEMORY_MS - 3_600_000);
  });

  it("shows running and queued jobs in enqueue order with their interruptions, and skips data that is not a story job", async () => {
    const { queue } = await open("e-snap");
    const raw = new Queue("stories", { connection: { url: server.url }, prefix: "e-snap" });
    cleanup(() => raw.close());
    const release = deferred();
    const started = deferred();
    queue.start(async (_lease, signal) => {
      started.resolve();
      await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done, { once: true }))]);
    });
    const first = makeJob(1);
    await queue.enqueue(first);
    await started.promise;
    await raw.add("story", { not: "a story" }, { jobId: "foreign", priority: 2 });
    const earlier = { ...makeJob(2), enqueuedAt: new Date(Date.parse(first.enqueuedAt) - 60_000).toISOString() };
    await queue.enqueue(earlier);
    await server.client.hset("e-snap:stories:harness:runs", storyJobId("acme/widgets#2"), "2");
    const views = await queue.snapshot();
    expect(views).toEqual([
      { jobId: storyJobId("acme/widgets#2"), job: earlier, state: "queued", interruptions: 2 },
      { jobId: storyJobId("acme/widgets#1"), job: first, state: "running", interruptions: 0, startedAt: expect.any(String) },
    ]);
    const startedAt = Date.parse(views[1]?.startedAt ?? "");
    expect(startedAt).toBe((await raw.getJob(storyJobId("acme/widgets#1")))?.processedOn);
    release.resolve();
  });

  it("lists the jobs set aside, newest first, with their story when one could be read", async () => {
    const { queue } = await open("e-aside");
    const kept = await queue.quarantine.put({ jobId: "story-5", data: { ...makeJob(5), kind: "x" }, reason: "$.kind bad", worker: "w1" });
    await until("a later millisecond", () => Date.now() > Number(kept.file.split(".").at(-1)));
    const bare = await queue.quarantine.put({ jobId: "foreign", data: 7, reason: "$ must be object", worker: "w2" });
    const { jobs, total } = await queue.quarantinedJobs();
    expect(total).toBe(2);
    expect(jobs).toEqual([
      { entry: bare.file, jobId: "foreign", reason: "$ must be object", worker: "w2", at: expect.any(String) },
      { entry: kept.file, jobId: "story-5", reason: "$.kind bad", worker: "w1", at: expect.any(String), story: "acme/widgets#5" },
    ]);
  });
});

describe("BullMQ adapter: its worker", () => {
  it("sets a job aside for the heartbeat (at most a second) while its installation's slots are taken", async () => {
    const { queue } = await open("w-retry", { installationSlots: 1, concurrency: 2 });
    const raw = new Queue("stories", { connection: { url: server.url }, prefix: "w-retry" });
    cleanup(() => raw.close());
    const release = deferred();
    const ran: number[] = [];
    queue.start(async (lease, signal) => {
      ran.push(lease.job.issue.number);
      await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done, { once: true }))]);
    });
    await queue.enqueue(makeJob(1));
    await until("the first job running", () => ran.length === 1);
    await queue.enqueue(makeJob(2));
    const second = storyJobId("acme/widgets#2");
    await until("the second job set aside", async () => (await raw.getJobState(second)) === "delayed" && ((await raw.getJob(second))?.delay ?? 0) > 0);
    expect((await raw.getJob(second))?.delay).toBeLessThanOrEqual(LEASE.heartbeatMs);
    release.resolve();
    await until("the second job run", () => ran.length === 2);
  });

  it("lets a running job finish, not aborted, when closed without abortRunning", async () => {
    const { queue, errors } = await open("w-finish");
    const release = deferred();
    const started = deferred();
    let aborted: boolean | undefined;
    queue.start(async (_lease, signal) => {
      started.resolve();
      await release.promise;
      aborted = signal.aborted;
    });
    await queue.enqueue(makeJob(1));
    await started.promise;
    const closed = queue.close();
    release.resolve();
    await closed;
    expect(aborted).toBe(false);
    expect(errors).toEqual([]);
    // Closed: sharing work now publishes nothing.
    const { queue: reader } = await open("w-finish");
    queue.shareLocalWork({ home: "/srv/late", collect: async () => NOTHING });
    expect(await reader.workerReports()).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe("BullMQ adapter: the worker's report and close", () => {
  it("shares its work under the claimed home, with the jobs it runs, and withdraws it on a clean close", async () => {
    const { queue, errors } = await open("r-share", { reportEveryMs: 100 });
    const { queue: reader } = await open("r-share", { reportEveryMs: 100 });
    const release = deferred();
    queue.start(async (_lease, signal) => {
      await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done, { once: true }))]);
    });
    queue.shareLocalWork({ home: "/srv/a", collect: async () => NOTHING });
    expect(() => queue.shareLocalWork({ home: "/srv/b", collect: async () => NOTHING })).toThrow("this queue already shares a worker's local work");
    expect(queue.reports.self).toBe(`${hostname()}:${createHash("sha256").update("/srv/a").digest("hex").slice(0, 12)}`);
    await queue.enqueue(makeJob(1));
    const jobId = storyJobId("acme/widgets#1");
    await until("the running job reported", async () =>
      (await reader.workerReports()).some((report) => report.live && report.running.includes(jobId) && report.home === "/srv/a"),
    );
    // A report renewed four renewals ago (three are allowed) is not live; two ago is.
    const [{ live: _live, ...report } = { live: true }] = await reader.workerReports();
    const now = await server.now();
    await server.client.set("r-share:stories:harness:worker:late", JSON.stringify({ ...report, worker: "late" }));
    await server.client.set("r-share:stories:harness:worker:recent", JSON.stringify({ ...report, worker: "recent" }));
    await server.client.zadd("r-share:stories:harness:workers", now - 400, "late", now - 200, "recent");
    const live = Object.fromEntries((await reader.workerReports()).map((one) => [one.worker, one.live]));
    expect(live).toMatchObject({ late: false, recent: true });
    release.resolve();
    await queue.close();
    expect(errors).toEqual([]);
    expect((await reader.workerReports()).map((one) => one.worker).sort()).toEqual(["late", "recent"]);
  });

  it("leaves its report at close while work is left on its disk, and logs a report it cannot collect", async () => {
    const { queue, errors } = await open("r-left", { reportEveryMs: 100 });
    const { queue: reader } = await open("r-left");
    let broken = false;
    queue.shareLocalWork({
      home: "/srv/left",
      collect: async () => {
        if (broken) throw new Error("the disk is gone");
        return { quarantined: [{ file: "q.json" }], undelivered: [] };
      },
    });
    await until("the report published", async () => (await reader.workerReports()).length === 1);
    broken = true;
    await until("the failed renewal logged", () => errors.includes("queue (redis): worker report: the disk is gone"));
    broken = false;
    await queue.close();
    expect(errors.filter((line) => line.includes("close"))).toEqual([]);
    expect((await reader.workerReports()).map((one) => [one.home, one.running, one.quarantined])).toEqual([["/srv/left", [], [{ file: "q.json" }]]]);

    // Undelivered writes alone keep the report too.
    const { queue: writer } = await open("r-undelivered", { reportEveryMs: 100 });
    const undelivered = [{ story: "acme/widgets#1", slot: "status-comment", kind: "status-comment", state: "pending" as const, attempts: 1 }];
    writer.shareLocalWork({ home: "/srv/writes", collect: async () => ({ quarantined: [], undelivered }) });
    await writer.close();
    const { queue: writesReader } = await open("r-undelivered");
    expect((await writesReader.workerReports()).map((one) => one.undelivered)).toEqual([undelivered]);

    // What the worker settles at close (its outbox's last pass) goes before the last report: nothing left, the report is withdrawn.
    const { queue: settling } = await open("r-settle", { reportEveryMs: 100 });
    let left = undelivered;
    settling.shareLocalWork({
      home: "/srv/settle",
      collect: async () => ({ quarantined: [], undelivered: left }),
      settle: async () => {
        left = [];
      },
    });
    await until("the report with the write", async () => (await settling.workerReports()).some((one) => one.undelivered.length === 1));
    await settling.close();
    const { queue: settledReader } = await open("r-settle");
    expect(await settledReader.workerReports()).toEqual([]);

    const { queue: failing, errors: failed } = await open("r-fail", { reportEveryMs: 100 });
    failing.shareLocalWork({
      home: "/srv/fail",
      collect: async () => {
        throw new Error("unreadable");
      },
    });
    await until("the failed report logged", () => failed.includes("queue (redis): worker report: unreadable"));
    await failing.close();
    expect(failed.at(-1)).toBe(
      `queue (redis): close: report: unreadable; jobs not handed back are taken by another worker once their lease (${LEASE.lockTtlMs} ms) expires`,
    );
  });

  it("gives up on a Redis that does not answer after closeGraceMs, and says so", async () => {
    const frozen = await startRedis();
    try {
      const errors: string[] = [];
      const queue = await BullmqQueue.open({
        url: frozen.url,
        prefix: "c-frozen",
        lease: LEASE,
        closeGraceMs: 300,
        log: { error: (message) => errors.push(message) },
      });
      queue.start(async () => undefined);
      await until("the worker ready", async () => (await queue.snapshot()).length === 0);
      process.kill(frozen.pid, "SIGSTOP");
      try {
        await queue.close();
      } finally {
        process.kill(frozen.pid, "SIGCONT");
      }
      expect(errors.find((line) => line.startsWith("queue (redis): close: "))).toMatch(
        /Redis did not answer within 300 ms; jobs not handed back are taken by another worker once their lease \(10000 ms\) expires$/,
      );
    } finally {
      await frozen.stop();
    }
  });
});
