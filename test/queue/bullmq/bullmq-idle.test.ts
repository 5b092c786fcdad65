/**
 * `idle()` of the BullMQ adapter (the processor's `idle`): it resolves only once every story
 * running in this process has returned, and at once when none runs. Against a real
 * redis-server; the only deadlines are hang guards.
 */
import { jest } from "@jest/globals";
import { BullmqQueue } from "../../../src/queue/bullmq/index.js";
import { redisForFile } from "../../support/redis.js";
import { cleanupAfterEach, deferred, makeJob } from "../helpers.js";
import { until } from "../../support/poll.js";

jest.setTimeout(120_000);

const server = redisForFile();
const cleanup = cleanupAfterEach();

describe("BullMQ adapter: idle", () => {
  it("resolves at once with no story running, and only after the running stories returned", async () => {
    const queue = await BullmqQueue.open({
      url: server.url,
      prefix: "idle",
      lease: { lockTtlMs: 10_000, heartbeatMs: 500 },
      concurrency: 2,
      log: { error: () => undefined },
    });
    cleanup(() => queue.close({ abortRunning: true }));
    await queue.idle();
    const releases = [deferred(), deferred()];
    const returned: number[] = [];
    const running: number[] = [];
    queue.start(async (lease) => {
      const issue = lease.job.issue.number;
      running.push(issue);
      await releases[issue - 1]?.promise;
      returned.push(issue);
    });
    await queue.enqueue(makeJob(1));
    await queue.enqueue(makeJob(2));
    await until("both stories running", () => running.length === 2);
    let idled = false;
    const idle = queue.idle().then(() => {
      idled = true;
      return [...returned];
    });
    // A round trip to Redis: a promise that did not wait for the stories has settled by then.
    await server.client.ping();
    expect(idled).toBe(false);
    releases[0]?.resolve();
    await until("the first story returned", () => returned.length === 1);
    await server.client.ping();
    expect(idled).toBe(false);
    releases[1]?.resolve();
    expect(await idle).toEqual([1, 2]);
  });
});
