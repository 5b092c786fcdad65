/**
 * Closing the BullMQ adapter when Redis has gone away: `close` still returns (its own Redis
 * steps are bounded) and says what it could not do, so a worker stopped with SIGTERM ends.
 * Against a real redis-server that the test stops; the only deadline is a generous hang guard.
 */
import { jest } from "@jest/globals";
import { BullmqQueue } from "../../../src/queue/bullmq/index.js";
import { startRedis, type RedisServer } from "../../support/redis.js";
import { deferred, makeJob, within } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(300_000);

/** This file's hang guard: each of its waits may take long on a loaded machine, none forever. */
const GUARD_MS = 120_000;

describe("BullMQ adapter: close with Redis down", () => {
  let redis: RedisServer | undefined;
  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });

  it("returns from close({ abortRunning }) with a story running, its worker aborted, and logs what it could not do", async () => {
    redis = await startRedis();
    const errors: string[] = [];
    // A grace far beyond what closing takes (each connection ends at its next reconnect), so it is never given up on.
    const queue = await BullmqQueue.open({
      url: redis.url,
      prefix: "close-down",
      lease: { lockTtlMs: 5000, heartbeatMs: 500 },
      reportEveryMs: 200,
      closeGraceMs: 60_000,
      log: { error: (message) => errors.push(message) },
    });
    const started = deferred();
    let aborted = false;
    queue.shareLocalWork({ home: "/nonexistent-home", collect: async () => ({ quarantined: [], undelivered: [] }) });
    queue.start(async (_lease, signal) => {
      started.resolve();
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      aborted = true;
    });
    await queue.enqueue(makeJob(1));
    await within("the job's start", started.promise, GUARD_MS);
    await redis.stop();
    redis = undefined;
    // Until close, every connection tries again, and each one's failures are logged, named.
    for (const where of ["redis", "queue", "worker"])
      await until(`a ${where} error logged`, () => errors.some((line) => line.startsWith(`queue (redis): ${where}: `)));
    await within("close with Redis down", queue.close({ abortRunning: true }), GUARD_MS);
    expect(aborted).toBe(true);
    const closing = errors.find((line) => line.startsWith("queue (redis): close: ")) ?? "";
    expect(closing).toBe(
      "queue (redis): close: Redis unreachable: Connection is closed.; jobs not handed back are taken by another worker once their lease (5000 ms) expires",
    );
    // Redis known to be gone: no last report is tried, and the connection is dropped, not asked to quit.
    expect(closing).not.toMatch(/[:;] (report|redis): /);
    // The job could not go back to the waiting list: said, naming the job, before close returns (close waits for the hand-back).
    expect(
      errors.some((line) =>
        /^queue \(redis\): job story-acme%2Fwidgets%231: could not be handed back \(.+\); another worker takes it once its lease expires$/.test(line),
      ),
    ).toBe(true);
  });

  it("returns from close with no job running and from a second close at once", async () => {
    redis = await startRedis();
    const queue = await BullmqQueue.open({
      url: redis.url,
      prefix: "close-idle",
      lease: { lockTtlMs: 5000, heartbeatMs: 500 },
      log: { error: () => undefined },
    });
    queue.start(async () => undefined);
    await until("the worker's connection", async () => (await queue.snapshot()).length === 0);
    await redis.stop();
    redis = undefined;
    await within("close with Redis down", queue.close(), GUARD_MS);
    await within("a second close", queue.close(), GUARD_MS);
  });
});
