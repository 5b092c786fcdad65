/**
 * The BullMQ adapter's worker and close (src/queue/bullmq/bullmq-queue.ts, `start` to `close`):
 * what `start` hands its processor, `idle`, a clean close (nothing said, every connection
 * ended, a job handed back at once), a close with Redis stopped or frozen (bounded, said in one
 * line), and a worker that reconnects after Redis dropped its connections. Each test that
 * stops or freezes Redis has its own redis-server. Every wait is a hang guard that fails the
 * test rather than hang: nothing depends on timing.
 */
import { jest } from "@jest/globals";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { BullmqQueue, storyJobId } from "../../../src/queue/bullmq/index.js";
import type { QuarantinedJob } from "../../../src/queue/index.js";
import { startRedis, type RedisServer } from "../../support/redis.js";
import { cleanupAfterEach, deferred, GUARD_MS, makeJob, within } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(120_000);

const LEASE = { lockTtlMs: 5000, heartbeatMs: 500 };

/** Each test starts its own redis-server (`server()`): many stop it, freeze it or count its clients. */
const cleanup = cleanupAfterEach();

async function server(): Promise<{ redis: RedisServer; client: Redis }> {
  const redis = await startRedis();
  const client = new Redis(redis.url);
  cleanup(
    () => redis.stop(),
    () => client.disconnect(),
  );
  return { redis, client };
}

async function open(
  url: string,
  prefix: string,
  options: Partial<Parameters<typeof BullmqQueue.open>[0]> = {},
): Promise<{ queue: BullmqQueue; errors: string[] }> {
  const errors: string[] = [];
  const queue = await BullmqQueue.open({ url, prefix, lease: LEASE, log: { error: (message) => errors.push(message) }, ...options });
  cleanup(() => queue.close({ abortRunning: true }));
  return { queue, errors };
}

/** A story that runs until the test releases it or the queue aborts it; `release` is also a cleanup. */
function heldStory(): {
  worker: Parameters<BullmqQueue["start"]>[0];
  started: Promise<void>;
  release: () => void;
  ended: () => "released" | "aborted" | undefined;
} {
  const started = deferred();
  const released = deferred();
  let ended: "released" | "aborted" | undefined;
  cleanup(() => released.resolve());
  return {
    worker: async (_lease, signal) => {
      started.resolve();
      const aborted = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      await Promise.race([released.promise.then(() => (ended ??= "released")), aborted.then(() => (ended ??= "aborted"))]);
    },
    started: started.promise,
    release: () => released.resolve(),
    ended: () => ended,
  };
}

/** The clients connected to the server, besides `client` itself. */
async function otherClients(client: Redis): Promise<number> {
  const list = (await client.client("LIST")) as string;
  return list.split("\n").filter((line) => line.trim() !== "").length - 1;
}

const LEASE_NOTE = `; jobs not handed back are taken by another worker once their lease (${LEASE.lockTtlMs} ms) expires`;

describe("BullMQ adapter: close", () => {
  it("closes a queue never started, says nothing, ends its connections and refuses work after", async () => {
    const { redis, client } = await server();
    const { queue, errors } = await open(redis.url, "c-bare");
    await within("idle before start", queue.idle());
    await within("close before start", queue.close({ abortRunning: true }));
    await within("a second close", queue.close());
    expect(errors).toEqual([]);
    await until("every connection of the queue ended", async () => (await otherClients(client)) === 0, GUARD_MS);
    await expect(queue.enqueue(makeJob(1))).rejects.toThrow("queue is closed");
  });

  it("aborts a running story, hands its job back at once and ends every connection, saying nothing", async () => {
    const { redis, client } = await server();
    const { queue, errors } = await open(redis.url, "c-abort");
    const story = heldStory();
    queue.start(story.worker);
    await queue.enqueue(makeJob(1));
    await within("the story's start", story.started);
    // Writes held for a moment as close begins: the job's hand-back still ends before close returns.
    await client.call("CLIENT", "PAUSE", "500", "WRITE");
    await within("close({ abortRunning })", queue.close({ abortRunning: true }));
    expect(story.ended()).toBe("aborted");
    expect(errors).toEqual([]);
    const raw = new Queue("stories", { connection: { url: redis.url }, prefix: "c-abort" });
    cleanup(() => raw.close());
    // Back in the list it waits in (by its priority), not left active until its lock expires.
    expect(await raw.getJobState(storyJobId("acme/widgets#1"))).toBe("prioritized");
    await raw.close();
    await until("every connection of the queue ended", async () => (await otherClients(client)) === 0, GUARD_MS);
  });

  it("lets a running story finish when closed without abortRunning; idle waits for it too", async () => {
    const { redis } = await server();
    const { queue, errors } = await open(redis.url, "c-finish");
    const story = heldStory();
    queue.start(story.worker);
    await queue.enqueue(makeJob(1));
    await within("the story's start", story.started);
    let idled = false;
    const idle = queue.idle().then(() => {
      idled = true;
    });
    const closed = queue.close();
    // A macrotask later: an idle or close that did not wait for the story would have settled.
    await new Promise((resolve) => setImmediate(resolve));
    expect(idled).toBe(false);
    story.release();
    await within("idle", idle);
    await within("close", closed);
    expect(story.ended()).toBe("released");
    expect(errors).toEqual([]);
  });

  it("returns with Redis stopped, aborting the story, and says in one line what it could not do", async () => {
    const { redis } = await server();
    // A grace far beyond what closing takes (each connection ends at its next reconnect), within the hang guard.
    const { queue, errors } = await open(redis.url, "c-down", { closeGraceMs: GUARD_MS / 2, reportEveryMs: 100 });
    queue.shareLocalWork({ home: "/srv/down", collect: async () => ({ quarantined: [], undelivered: [] }) });
    const story = heldStory();
    queue.start(story.worker);
    await queue.enqueue(makeJob(1));
    await within("the story's start", story.started);
    await redis.stop();
    // Until close, every connection tries again, and each one's failures are logged, named.
    for (const where of ["redis", "queue", "worker"])
      await until(`a ${where} error logged`, () => errors.some((line) => line.startsWith(`queue (redis): ${where}: `)), GUARD_MS);
    await within("close with Redis stopped", queue.close({ abortRunning: true }));
    expect(story.ended()).toBe("aborted");
    const closing = errors.filter((line) => line.startsWith("queue (redis): close: "));
    // No last report tried, nothing given up on: only Redis unreachable.
    expect(closing).toEqual([`queue (redis): close: Redis unreachable: Connection is closed.${LEASE_NOTE}`]);
    await until(
      "the failed hand-back logged",
      () =>
        errors.includes(
          "queue (redis): job story-acme%2Fwidgets%231: could not be handed back (Connection is closed.); another worker takes it once its lease expires",
        ),
      GUARD_MS,
    );
  });

  it("gives up on a frozen Redis after closeGraceMs, and says so", async () => {
    const { redis } = await server();
    const { queue, errors } = await open(redis.url, "c-frozen", { closeGraceMs: 300 });
    queue.start(async () => undefined);
    await until("the worker ready", async () => (await queue.snapshot()).length === 0, GUARD_MS);
    process.kill(redis.pid, "SIGSTOP");
    try {
      await within("close with Redis frozen", queue.close());
    } finally {
      process.kill(redis.pid, "SIGCONT");
    }
    expect(errors.filter((line) => line.startsWith("queue (redis): close: "))).toEqual([
      `queue (redis): close: Redis did not answer within 300 ms${LEASE_NOTE}`,
    ]);
  });

  it("gives up on a frozen Redis with a story stopped, after one closeGraceMs over its steps and the hand-back, and says so once", async () => {
    const { redis } = await server();
    const { queue, errors } = await open(redis.url, "c-frozen-story", { closeGraceMs: 300 });
    const story = heldStory();
    queue.start(story.worker);
    await queue.enqueue(makeJob(1));
    await within("the story's start", story.started);
    process.kill(redis.pid, "SIGSTOP");
    try {
      await within("close({ abortRunning }) with Redis frozen", queue.close({ abortRunning: true }));
    } finally {
      process.kill(redis.pid, "SIGCONT");
    }
    expect(story.ended()).toBe("aborted");
    expect(errors.filter((line) => line.startsWith("queue (redis): close: "))).toEqual([
      `queue (redis): close: Redis did not answer within 300 ms${LEASE_NOTE}`,
    ]);
  });

  it("says every step it could not do, in order, in one line", async () => {
    const { redis } = await server();
    const { queue, errors } = await open(redis.url, "c-both", { closeGraceMs: 300 });
    let closing = false;
    queue.shareLocalWork({
      home: "/srv/both",
      collect: async () => {
        if (!closing) return { quarantined: [], undelivered: [] };
        // The last report fails, and Redis freezes before the queue's connection quits.
        process.kill(redis.pid, "SIGSTOP");
        throw new Error("the disk is gone");
      },
    });
    await until("the first report", async () => (await queue.workerReports()).length === 1, GUARD_MS);
    closing = true;
    try {
      await within("close", queue.close());
    } finally {
      process.kill(redis.pid, "SIGCONT");
    }
    expect(errors.filter((line) => line.startsWith("queue (redis): close: "))).toEqual([
      `queue (redis): close: report: the disk is gone; Redis did not answer within 300 ms${LEASE_NOTE}`,
    ]);
  });

  it("waits its default grace for a report under way, and then says nothing", async () => {
    const { redis, client } = await server();
    const { queue, errors } = await open(redis.url, "c-grace");
    const collecting = deferred();
    const held = deferred();
    cleanup(() => held.resolve());
    let calls = 0;
    queue.shareLocalWork({
      home: "/srv/grace",
      collect: async () => {
        calls += 1;
        if (calls === 1) {
          collecting.resolve();
          await held.promise;
        }
        return { quarantined: [], undelivered: [] };
      },
    });
    await within("the first report collected", collecting.promise);
    const closed = queue.close();
    let settled = false;
    void closed.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Observed, not slept: close has asked Redis (its PING, the only one the queue sends) and so waits on the report
    // under way; a close that gave up on it would have ended (perhaps before asking) and said so.
    await until("close to ask Redis, or to end", async () => settled || /\bcmd=ping\b/.test((await client.client("LIST")) as string), GUARD_MS);
    expect(settled).toBe(false);
    expect(errors).toEqual([]);
    held.resolve();
    await within("close", closed);
    expect(errors).toEqual([]);
  });
});

describe("BullMQ adapter: start", () => {
  it("runs one worker, sets a job aside for slotRetryMs (or the heartbeat, at most a second) while its installation is full", async () => {
    const { redis } = await server();
    const delays: number[] = [];
    for (const [prefix, slotRetryMs] of [
      ["s-told", 60_000],
      ["s-heartbeat", undefined],
    ] as const) {
      const { queue, errors } = await open(redis.url, prefix, { installationSlots: 1, concurrency: 2, slotRetryMs });
      const raw = new Queue("stories", { connection: { url: redis.url }, prefix });
      cleanup(() => raw.close());
      const story = heldStory();
      queue.start(story.worker);
      expect(() => queue.start(story.worker)).toThrow(new Error("the queue's worker is already started"));
      await queue.enqueue(makeJob(1));
      await within("the first story's start", story.started);
      await queue.enqueue(makeJob(2));
      const second = storyJobId("acme/widgets#2");
      await until(
        "the second job set aside",
        async () => (await raw.getJobState(second)) === "delayed" && ((await raw.getJob(second))?.delay ?? 0) > 0,
        GUARD_MS,
      );
      delays.push((await raw.getJob(second))?.delay ?? 0);
      story.release();
      expect(errors).toEqual([]);
    }
    const [told = 0, heartbeat = 0] = delays;
    expect(told).toBeGreaterThan(1000);
    expect(told).toBeLessThanOrEqual(60_000);
    expect(heartbeat).toBeLessThanOrEqual(LEASE.heartbeatMs);
  });

  it("sets aside data that is not a story job under this worker's id, tells its listener, and logs it", async () => {
    const { redis } = await server();
    for (const prefix of ["s-heard", "s-unheard"]) {
      const { queue, errors } = await open(redis.url, prefix);
      const heard: QuarantinedJob[] = [];
      if (prefix === "s-heard") queue.listen({ onQuarantine: (quarantined) => heard.push(quarantined) });
      queue.start(async () => undefined);
      const raw = new Queue("stories", { connection: { url: redis.url }, prefix });
      cleanup(() => raw.close());
      await raw.add("story", { not: "a story" }, { jobId: "foreign" });
      await until("the job set aside", async () => (await queue.quarantinedJobs()).total === 1, GUARD_MS);
      const { jobs } = await queue.quarantinedJobs();
      expect(jobs.map((job) => [job.jobId, job.worker])).toEqual([["foreign", queue.reports.self]]);
      await until("the set-aside logged", () => errors.length > 0, GUARD_MS);
      expect(errors).toEqual([expect.stringMatching(/^queue \(redis\): quarantine: job foreign set aside in .+: /)]);
      expect(heard.map((one) => one.file)).toEqual(prefix === "s-heard" ? [jobs[0]?.entry] : []);
    }
  });

  it("reconnects its worker after Redis dropped every connection", async () => {
    const { redis, client } = await server();
    const { queue } = await open(redis.url, "s-again");
    const ran: number[] = [];
    queue.start(async (lease) => {
      ran.push(lease.job.issue.number);
    });
    await queue.enqueue(makeJob(1));
    await until("the first story run", () => ran.length === 1, GUARD_MS);
    await client.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
    await until("the queue's connections back", async () => (await otherClients(client)) >= 3, GUARD_MS);
    await queue.enqueue(makeJob(2));
    await until("the second story run", () => ran.length === 2, GUARD_MS);
  });
});
