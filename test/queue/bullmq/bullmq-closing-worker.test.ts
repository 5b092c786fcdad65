/**
 * The BullMQ worker whose waits end when it closes (src/queue/bullmq/closing-worker.ts): a wait far
 * longer than the hang guard ends at close, a wait after close at once, and a wait ended by its
 * own controller still ends. Against a real redis-server; the only deadlines are hang guards.
 */
import { jest } from "@jest/globals";
import { ClosingWorker } from "../../../src/queue/bullmq/closing-worker.js";
import { redisForFile } from "../../support/redis.js";
import { cleanupAfterEach, within } from "../helpers.js";

jest.setTimeout(120_000);

const server = redisForFile();
const cleanup = cleanupAfterEach();
/** Far beyond the hang guard: a wait that is not ended fails the test. */
const LONG_MS = 600_000;

function worker(prefix: string): ClosingWorker {
  const opened = new ClosingWorker("stories", async () => undefined, { connection: { url: server.url }, prefix, autorun: false });
  cleanup(() => opened.close(true));
  return opened;
}

describe("BullMQ adapter: its worker's waits", () => {
  it("ends a wait under way when it closes, and waits no more after", async () => {
    const closing = worker("w-close");
    let ended = false;
    const waiting = closing.delay(LONG_MS).then(() => {
      ended = true;
    });
    // A round trip to Redis: a wait that did not wait has ended by then.
    await server.client.ping();
    expect(ended).toBe(false);
    await within("close", closing.close());
    await within("the wait under way", waiting);
    await within("a wait after close", closing.delay(LONG_MS));
  });

  it("still ends a wait by its own controller, before close or already ended", async () => {
    const open = worker("w-own");
    const own = new AbortController();
    let ended = false;
    const waiting = open.delay(LONG_MS, own as unknown as Parameters<ClosingWorker["delay"]>[1]).then(() => {
      ended = true;
    });
    await server.client.ping();
    expect(ended).toBe(false);
    own.abort();
    await within("the wait its controller ended", waiting);
    await within("a wait whose controller had ended", open.delay(LONG_MS, own as unknown as Parameters<ClosingWorker["delay"]>[1]));
  });
});
