/**
 * The reporter of a story whose draft pull request is still being opened: events wait in order
 * without holding the pipeline, reach the reporter once it is made, and are then awaited as the
 * reporter awaits them; with no reporter ever made they are dropped, and nothing rejects unhandled.
 */
import { emptySnapshot, type HistoryEvent, type StorySnapshot } from "../../src/pipeline/index.js";
import { PendingReporter } from "../../src/runner/pending-reporter.js";
import type { StoryReporter } from "../../src/runner/index.js";
import { until } from "../support/poll.js";

const called = (calls: readonly string[], count: number) => until(`${count} call(s) on the reporter`, () => calls.length >= count);

/** A reporter that records each call, and whose onEvent resolves only when `release` is called. */
function recordingReporter() {
  const calls: string[] = [];
  const releases: Array<() => void> = [];
  const reporter: StoryReporter = {
    onEvent: (event: HistoryEvent, _snapshot: StorySnapshot) =>
      new Promise<void>((resolve) => {
        calls.push(`event ${event.kind}`);
        releases.push(resolve);
      }),
    setHeadSha: async (sha) => void calls.push(`head ${sha}`),
    showPushWaiting: async (push) => void calls.push(`waiting ${push.sha}`),
    markReadyForReview: async (id) => void calls.push(`ready ${id}`),
    handOff: async () => (calls.push("hand-off"), true),
  };
  return { reporter, calls, releaseAll: () => releases.splice(0).forEach((release) => release()) };
}

const event = (kind: "stage.started" | "gate.finished"): HistoryEvent => ({ kind, at: "2026-12-05T00:00:00.000Z" }) as unknown as HistoryEvent;

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

describe("PendingReporter", () => {
  it("keeps the events in order without waiting, passes them on once the reporter is made, then awaits each", async () => {
    const made = deferred<StoryReporter>();
    const pending = new PendingReporter(made.promise);
    const inner = recordingReporter();
    // Before the reporter exists, onEvent resolves at once: the pipeline goes on.
    await pending.onEvent(event("stage.started"), emptySnapshot());
    await pending.onEvent(event("gate.finished"), emptySnapshot());
    expect(inner.calls).toEqual([]);

    made.resolve(inner.reporter);
    await called(inner.calls, 1);
    expect(inner.calls).toEqual(["event stage.started"]);
    inner.releaseAll();
    await called(inner.calls, 2);
    expect(inner.calls).toEqual(["event stage.started", "event gate.finished"]);
    inner.releaseAll();
    expect(await pending.arrived()).toBe(true);

    // Once the reporter is there, an event is awaited as the reporter awaits it.
    let applied = false;
    const third = pending.onEvent(event("stage.started"), emptySnapshot()).then(() => (applied = true));
    await called(inner.calls, 3);
    expect(applied).toBe(false);
    inner.releaseAll();
    await third;
    expect(applied).toBe(true);

    expect(await pending.handOff()).toBe(true);
    await pending.setHeadSha("abc");
    await pending.showPushWaiting({ branch: "harness/story-1", sha: "abc", why: "GitHub did not answer" });
    await pending.markReadyForReview("PR_1");
    expect(inner.calls.slice(3)).toEqual(["hand-off", "head abc", "waiting abc", "ready PR_1"]);
  });

  it("drops the events when no reporter is ever made, and says so through settled()", async () => {
    const made = deferred<StoryReporter>();
    const pending = new PendingReporter(made.promise);
    await pending.onEvent(event("stage.started"), emptySnapshot());
    made.reject(new Error("GitHub refused the draft pull request"));
    await expect(pending.settled()).rejects.toThrow("GitHub refused the draft pull request");
    expect(await pending.arrived()).toBe(false);
    // An event after the refusal is dropped too; a call the runner awaits fails with the refusal. None rejects unhandled.
    await expect(pending.onEvent(event("gate.finished"), emptySnapshot())).resolves.toBeUndefined();
    await expect(pending.setHeadSha("abc")).rejects.toThrow("GitHub refused the draft pull request");
  });
});
