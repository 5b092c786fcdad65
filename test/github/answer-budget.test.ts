/**
 * A handler's budget: the answer carries the handler's value or failure when it settles in
 * time; past the budget, the answer goes out empty and the late value (or failure) is handed on
 * (or logged) once the work ends.
 */
import { describe, expect, it } from "@jest/globals";
import { withinBudget } from "../../src/github/door/index.js";
import { RecordingLog } from "./fake-setup.js";

/** A promise and the functions that settle it. */
function settleable<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("withinBudget", () => {
  it("answers with the work's value, or throws its failure, when it settles in time; nothing is late", async () => {
    const log = new RecordingLog();
    const late: string[] = [];
    expect(await withinBudget(Promise.resolve("done"), 60_000, (value) => late.push(value), log, { event: "e" })).toBe("done");
    await expect(withinBudget(Promise.reject(new Error("disk full")), 60_000, (value: string) => late.push(value), log, { event: "e" })).rejects.toThrow(
      "disk full",
    );
    expect(late).toEqual([]);
    expect(log.lines).toEqual([]);
  });

  it("answers empty past the budget, then hands the late value on when the work ends", async () => {
    const log = new RecordingLog();
    const work = settleable<string>();
    const late: string[] = [];
    expect(await withinBudget(work.promise, 5, (value) => late.push(value), log, { event: "issues.labeled", deliveryId: "d-1" })).toBeUndefined();
    expect(log.lines).toEqual([
      {
        level: "warn",
        details: { event: "issues.labeled", deliveryId: "d-1", budgetMs: 5 },
        message: "a webhook handler is still working; GitHub is answered now and the work goes on",
      },
    ]);
    work.resolve("enqueued");
    await work.promise;
    await new Promise((wake) => setImmediate(wake));
    expect(late).toEqual(["enqueued"]);
  });

  it("logs a failure that comes after the budget, and hands nothing on", async () => {
    const log = new RecordingLog();
    const work = settleable<string>();
    const late: string[] = [];
    expect(await withinBudget(work.promise, 5, (value) => late.push(value), log, { deliveryId: "d-2" })).toBeUndefined();
    work.reject(new Error("GitHub is down"));
    await work.promise.catch(() => undefined);
    await new Promise((wake) => setImmediate(wake));
    expect(late).toEqual([]);
    expect(log.lines.at(-1)).toMatchObject({
      level: "error",
      details: { deliveryId: "d-2", err: expect.objectContaining({ message: "GitHub is down" }) },
      message: "a webhook handler failed after the answer",
    });
  });
});
