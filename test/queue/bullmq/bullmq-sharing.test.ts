/**
 * What the BullMQ adapter shows of itself (src/queue/bullmq/bullmq-queue.ts, `shareLocalWork`
 * to the end): the worker report it renews, never two at once and none after close, the report
 * it leaves or withdraws at close, the errors it logs (to stderr without a logger), its
 * snapshot and the jobs it set aside. One redis-server for the file; every wait is a hang guard
 * that fails the test rather than hang: nothing depends on timing.
 */
import { jest } from "@jest/globals";
import { Queue, Worker } from "bullmq";
import { BullmqQueue, storyJobId } from "../../../src/queue/bullmq/index.js";
import type { LocalWork } from "../../../src/status/index.js";
import { redisForFile } from "../../support/redis.js";
import { cleanupAfterEach, deferred, GUARD_MS, makeJob } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(120_000);

const LEASE = { lockTtlMs: 5000, heartbeatMs: 500 };
const EVERY_MS = 50;
const NOTHING: LocalWork = { quarantined: [], undelivered: [] };
const LEASE_NOTE = `; jobs not handed back are taken by another worker once their lease (${LEASE.lockTtlMs} ms) expires`;

const server = redisForFile();
const cleanup = cleanupAfterEach();

/**
 * Ten renewal periods, counted rather than slept: ten ticks of an interval of the renewals' period armed after the
 * queue's own. Node keeps the timers of one period in one list in the order they were armed, and re-arms an interval
 * at its end, so each of these ticks comes after a tick of a renewal timer left running: it has fired ten times by
 * then, however loaded the machine (a sleep of ten periods guarantees one). The queue takes no clock to drive instead.
 */
const tenRenewals = (): Promise<void> =>
  new Promise((resolve) => {
    let ticks = 0;
    const timer = setInterval(() => {
      ticks += 1;
      if (ticks < 10) return;
      clearInterval(timer);
      resolve();
    }, EVERY_MS);
  });

async function open(prefix: string, options: Partial<Parameters<typeof BullmqQueue.open>[0]> = {}): Promise<{ queue: BullmqQueue; errors: string[] }> {
  const errors: string[] = [];
  const queue = await BullmqQueue.open({
    url: server.url,
    prefix,
    lease: LEASE,
    reportEveryMs: EVERY_MS,
    log: { error: (message) => errors.push(message) },
    ...options,
  });
  cleanup(() => queue.close({ abortRunning: true }));
  return { queue, errors };
}

describe("BullMQ adapter: the worker report", () => {
  it("renews it, never two at once, with no job running before start, and stops at close", async () => {
    const { queue, errors } = await open("r-renew");
    const { queue: reader } = await open("r-renew");
    let calls = 0;
    const held = deferred();
    let holding = false;
    cleanup(() => held.resolve());
    queue.shareLocalWork({
      home: "/srv/renew",
      collect: async () => {
        calls += 1;
        if (holding) await held.promise;
        return NOTHING;
      },
    });
    expect(() => queue.shareLocalWork({ home: "/srv/again", collect: async () => NOTHING })).toThrow(
      new Error("this queue already shares a worker's local work"),
    );
    await until("three renewals", () => calls >= 3, GUARD_MS);
    expect((await reader.workerReports()).map((report) => [report.home, report.running])).toEqual([["/srv/renew", []]]);
    holding = true;
    const at = calls;
    await until("a renewal held", () => calls === at + 1, GUARD_MS);
    await tenRenewals();
    expect(calls).toBe(at + 1);
    holding = false;
    held.resolve();
    await until("renewals again", () => calls >= at + 3, GUARD_MS);
    await queue.close();
    const closedAt = calls;
    await tenRenewals();
    expect(calls).toBe(closedAt);
    expect(errors).toEqual([]);
    expect(await reader.workerReports()).toEqual([]);
  });

  it("shares nothing once closed", async () => {
    const { queue, errors } = await open("r-late");
    const { queue: reader } = await open("r-late");
    await queue.close();
    let calls = 0;
    queue.shareLocalWork({
      home: "/srv/late",
      collect: async () => {
        calls += 1;
        return NOTHING;
      },
    });
    await tenRenewals();
    expect(calls).toBe(0);
    expect(errors).toEqual([]);
    expect(await reader.workerReports()).toEqual([]);
  });

  it("reports the jobs it runs", async () => {
    const { queue } = await open("r-running");
    const { queue: reader } = await open("r-running");
    const release = deferred();
    cleanup(() => release.resolve());
    queue.start(async (_lease, signal) => {
      await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done, { once: true }))]);
    });
    queue.shareLocalWork({ home: "/srv/running", collect: async () => NOTHING });
    await queue.enqueue(makeJob(1));
    await until(
      "the running job reported",
      async () => (await reader.workerReports()).some((report) => report.running.includes(storyJobId("acme/widgets#1"))),
      GUARD_MS,
    );
    release.resolve();
  });

  it("withdraws it at close when nothing is left on disk, else leaves it, with no job running", async () => {
    const quarantined = [{ file: "q.json" }];
    const undelivered = [{ story: "acme/widgets#1", slot: "status-comment", kind: "status-comment", state: "pending" as const, attempts: 1 }];
    const cases: Array<[string, LocalWork, boolean]> = [
      ["r-none", NOTHING, false],
      ["r-quarantined", { quarantined, undelivered: [] }, true],
      ["r-undelivered", { quarantined: [], undelivered }, true],
    ];
    for (const [prefix, work, left] of cases) {
      const { queue, errors } = await open(prefix);
      const { queue: reader } = await open(prefix);
      const release = deferred();
      cleanup(() => release.resolve());
      queue.start(async (_lease, signal) => {
        await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done, { once: true }))]);
      });
      queue.shareLocalWork({ home: `/srv/${prefix}`, collect: async () => work });
      await queue.enqueue(makeJob(1));
      await until("the running job reported", async () => (await reader.workerReports()).some((report) => report.running.length === 1), GUARD_MS);
      await queue.close({ abortRunning: true });
      expect(errors).toEqual([]);
      const reports = (await reader.workerReports()).map((report) => [report.running, report.quarantined, report.undelivered]);
      expect(reports).toEqual(left ? [[[], work.quarantined, work.undelivered]] : []);
    }
  });

  it("logs a renewal or a last report it cannot collect, an error by its message, anything else as text", async () => {
    const { queue, errors } = await open("r-fail");
    let thrown: unknown = new Error("the disk is gone");
    queue.shareLocalWork({
      home: "/srv/fail",
      collect: async () => {
        throw thrown;
      },
    });
    await until("the failed renewal logged", () => errors.includes("queue (redis): worker report: the disk is gone"), GUARD_MS);
    thrown = "unreadable";
    await until("the failed renewal logged as text", () => errors.includes("queue (redis): worker report: unreadable"), GUARD_MS);
    await queue.close();
    expect(errors.filter((line) => line.startsWith("queue (redis): close: "))).toEqual([`queue (redis): close: report: unreadable${LEASE_NOTE}`]);
  });

  it("writes its errors to stderr when it has no logger", async () => {
    const errors: string[] = [];
    const queue = await BullmqQueue.open({ url: server.url, prefix: "r-stderr", lease: LEASE, reportEveryMs: EVERY_MS });
    cleanup(() => queue.close());
    const write = process.stderr.write;
    // Only this test's lines are kept; anything else still reaches stderr.
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      const text = String(chunk);
      if (text.startsWith("queue (redis): ")) {
        errors.push(text);
        return true;
      }
      return write.call(process.stderr, chunk, ...rest);
    }) as typeof process.stderr.write;
    try {
      queue.shareLocalWork({
        home: "/srv/stderr",
        collect: async () => {
          throw new Error("no disk");
        },
      });
      await until("the failed renewal written", () => errors.length > 0, GUARD_MS);
      await queue.close();
    } finally {
      process.stderr.write = write;
    }
    expect(errors[0]).toBe("queue (redis): worker report: no disk\n");
  });
});

describe("BullMQ adapter: what it shows", () => {
  it("shows live jobs in enqueue order, running or queued with their interruptions, and nothing else", async () => {
    const { queue } = await open("v-snap");
    const raw = new Queue("stories", { connection: { url: server.url }, prefix: "v-snap" });
    cleanup(() => raw.close());
    // A finished story job BullMQ kept (another writer's options): not live, not shown.
    await raw.add("story", makeJob(9), { jobId: "kept", removeOnComplete: false });
    const finisher = new Worker("stories", async () => undefined, { connection: { url: server.url }, prefix: "v-snap" });
    cleanup(() => finisher.close());
    await until("the kept job finished", async () => (await raw.getJobState("kept")) === "completed", GUARD_MS);
    await finisher.close();
    const release = deferred();
    const started = deferred();
    cleanup(() => release.resolve());
    queue.start(async (_lease, signal) => {
      started.resolve();
      await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done, { once: true }))]);
    });
    const base = Date.now();
    const at = (minutes: number): string => new Date(base + minutes * 60_000).toISOString();
    const running = { ...makeJob(1), enqueuedAt: at(0) };
    await queue.enqueue(running);
    await started.promise;
    await raw.add("story", { not: "a story" }, { jobId: "foreign", priority: 2 });
    const queued = [
      { ...makeJob(2), enqueuedAt: at(3) },
      { ...makeJob(3), enqueuedAt: at(-2) },
      { ...makeJob(4), enqueuedAt: at(-1) },
    ];
    for (const job of queued) await queue.enqueue(job);
    await server.client.hset("v-snap:stories:harness:runs", storyJobId("acme/widgets#3"), "2");
    // A job handed back keeps the time it last started: queued, it shows none.
    await server.client.hset(`v-snap:stories:${storyJobId("acme/widgets#2")}`, "processedOn", String(base));
    const runningId = storyJobId("acme/widgets#1");
    const view = (job: typeof running, extra: object = {}): object => ({ jobId: storyJobId(job.storyKey), job, state: "queued", interruptions: 0, ...extra });
    const processedOn = (await raw.getJob(runningId))?.processedOn ?? 0;
    expect(await queue.snapshot()).toStrictEqual([
      view(queued[1] ?? running, { interruptions: 2 }),
      view(queued[2] ?? running),
      view(running, { state: "running", startedAt: new Date(processedOn).toISOString() }),
      view(queued[0] ?? running),
    ]);
    // A running job whose start count is gone counts no interruption; one not yet stamped has no start time.
    await server.client.hdel("v-snap:stories:harness:runs", runningId);
    await server.client.hdel(`v-snap:stories:${runningId}`, "processedOn");
    expect((await queue.snapshot())[2]).toStrictEqual(view(running, { state: "running" }));
    release.resolve();
  });

  it("lists the jobs set aside, newest first, with their story when one could be read", async () => {
    const { queue } = await open("v-aside");
    const kept = await queue.quarantine.put({ jobId: "story-5", data: { ...makeJob(5), kind: "x" }, reason: "$.kind bad", worker: "w1" });
    await until("a later millisecond", () => Date.now() > Number(kept.file.split(".").at(-1)), GUARD_MS);
    const bare = await queue.quarantine.put({ jobId: "foreign", data: 7, reason: "$ must be object", worker: "w2" });
    const { jobs, total } = await queue.quarantinedJobs();
    expect(total).toBe(2);
    expect(jobs).toStrictEqual([
      { entry: bare.file, jobId: "foreign", reason: "$ must be object", worker: "w2", at: expect.any(String) },
      { entry: kept.file, jobId: "story-5", reason: "$.kind bad", worker: "w1", at: expect.any(String), story: "acme/widgets#5" },
    ]);
  });
});
