/**
 * The delivery log's batching window, seen through jest's fake `setTimeout` only (file writes
 * stay real): a record opens one window, ids recorded meanwhile join it, and closing ends it at
 * once. Timers are counted, not waited for: nothing here depends on how fast the machine is.
 */
import { jest } from "@jest/globals";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { DeliveryLog } from "../../../src/queue/index.js";
import { makeTempDir, removeTempDirs } from "../../support/tmp.js";

afterAll(removeTempDirs);

/** The descriptors of this process open on `path`. */
function descriptorsOn(path: string): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(join("/proc/self/fd", fd)) === path;
    } catch {
      return false;
    }
  }).length;
}

describe("DeliveryLog's batching window", () => {
  afterEach(() => {
    jest.useRealTimers();
  });
  const fakeTimeouts = (): void => {
    jest.useFakeTimers({ doNotFake: ["setImmediate", "setInterval", "clearInterval", "nextTick", "queueMicrotask", "Date", "hrtime", "performance"] });
  };

  it("gathers the ids of one window into the file once it ends, and opens one window at a time", async () => {
    const path = join(makeTempDir(), "deliveries");
    const log = await DeliveryLog.open(path);
    fakeTimeouts();
    const first = log.record("d-1");
    expect(jest.getTimerCount()).toBe(1);
    const second = log.record("d-2");
    expect(jest.getTimerCount()).toBe(1);
    expect(readFileSync(path, "utf8")).toBe("");
    jest.runOnlyPendingTimers();
    await Promise.all([first, second]);
    expect(readFileSync(path, "utf8")).toBe("d-1\nd-2\n");
    // The window closed with its batch: the next id opens a new one.
    const third = log.record("d-3");
    expect(jest.getTimerCount()).toBe(1);
    jest.runOnlyPendingTimers();
    await third;
    jest.useRealTimers();
    await log.close();
    expect(readFileSync(path, "utf8")).toBe("d-1\nd-2\nd-3\n");
  });

  it("ends an open window when it closes, and opens none while closing", async () => {
    const path = join(makeTempDir(), "deliveries");
    const log = await DeliveryLog.open(path);
    fakeTimeouts();
    const recorded = log.record("d-1");
    expect(jest.getTimerCount()).toBe(1);
    const closing = log.close();
    expect(jest.getTimerCount()).toBe(0);
    // (A mutant that waits would be let go here, so that it fails on the count, not by hanging.)
    jest.runOnlyPendingTimers();
    await Promise.all([recorded, closing]);
    expect(readFileSync(path, "utf8")).toBe("d-1\n");

    const idle = await DeliveryLog.open(path);
    const closingIdle = idle.close();
    expect(jest.getTimerCount()).toBe(0);
    jest.runOnlyPendingTimers();
    await closingIdle;
  });

  it("closes its file", async () => {
    const path = join(makeTempDir(), "deliveries");
    const log = await DeliveryLog.open(path);
    await log.add("d-1");
    expect(descriptorsOn(path)).toBe(1);
    await log.close();
    expect(descriptorsOn(path)).toBe(0);
  });
});
