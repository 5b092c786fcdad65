/** Revision triggers that arrive while their story runs are batched into its next round (the embedded queue). */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedQueue, type JobLease, type StoryJob } from "../../../src/queue/index.js";
import { deferred, makeJob, tempDir, within } from "../helpers.js";

function reviseJob(issue: number, deliveryId: string, reviewId: number): StoryJob {
  return {
    ...makeJob(issue, deliveryId, { kind: "revise" }),
    pullNumber: 100 + issue,
    revision: { triggers: [{ kind: "review", by: "writer", id: reviewId, body: `review ${reviewId}`, comments: [] }] },
  };
}

describe("the embedded queue's pending revisions", () => {
  let folder: { dir: string; remove: () => Promise<void> };
  let queue: EmbeddedQueue | undefined;

  beforeEach(async () => {
    folder = await tempDir("harness-pending-");
  });
  afterEach(async () => {
    await queue?.close({ abortRunning: true });
    queue = undefined;
    await folder.remove();
  });

  it("batches revise jobs that arrive while the story runs into one next round, in arrival order; other kinds are still refused", async () => {
    queue = await EmbeddedQueue.open({ dir: folder.dir });
    const release = deferred();
    const ran: JobLease[] = [];
    const secondDone = deferred();
    queue.start(async (lease) => {
      ran.push(lease);
      if (ran.length === 1) await release.promise;
      else secondDone.resolve();
    });
    expect(await queue.enqueue(makeJob(1))).toMatchObject({ accepted: true });
    await within(
      "the first run to start",
      (async () => {
        while (ran.length === 0) await new Promise((done) => setImmediate(done));
      })(),
    );

    expect(await queue.enqueue(reviseJob(1, "review-a", 11))).toMatchObject({ accepted: true, batched: true });
    expect(await queue.enqueue(reviseJob(1, "review-b", 12))).toMatchObject({ accepted: true, batched: true });
    // A redelivery of a batched trigger is a duplicate; a second start is still refused.
    expect(await queue.enqueue(reviseJob(1, "review-a", 11))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await queue.enqueue(makeJob(1, "again"))).toEqual({ accepted: false, reason: "already-active" });
    expect(await queue.isActive(makeJob(1).storyKey)).toBe(true);

    release.resolve();
    await within("the batched round to run", secondDone.promise);
    expect(ran).toHaveLength(2);
    expect(ran[1]!.job.kind).toBe("revise");
    expect(ran[1]!.job.revision?.triggers.map((trigger) => (trigger.kind === "ci" ? trigger.suiteId : trigger.id))).toEqual([11, 12]);
    await queue.idle();
    expect(await queue.snapshot()).toEqual([]);
  });

  it("runs a batch left by a run that ended before a restart when the queue opens again", async () => {
    queue = await EmbeddedQueue.open({ dir: folder.dir });
    expect(await queue.enqueue(makeJob(2))).toMatchObject({ accepted: true });
    expect(await queue.enqueue(reviseJob(2, "review-c", 21))).toMatchObject({ accepted: true, batched: true });
    await queue.close();

    const reopened = await EmbeddedQueue.open({ dir: folder.dir });
    queue = reopened;
    const kinds = (await reopened.snapshot()).map((view) => view.job.kind);
    // The start job is still queued (it never ran): the batch waits for it.
    expect(kinds).toEqual(["start"]);
    const ran: StoryJob[] = [];
    const both = deferred();
    reopened.start(async (lease) => {
      ran.push(lease.job);
      if (ran.length === 2) both.resolve();
    });
    await within("both runs", both.promise);
    expect(ran.map((job) => job.kind)).toEqual(["start", "revise"]);
    expect(ran[1]!.revision?.triggers.map((trigger) => (trigger.kind === "ci" ? trigger.suiteId : trigger.id))).toEqual([21]);
  });

  it("opens over a batch file that does not parse or holds no revise job, and runs nothing from it", async () => {
    mkdirSync(join(folder.dir, "pending"), { recursive: true });
    writeFileSync(join(folder.dir, "pending", "garbage.json"), "{not json");
    writeFileSync(join(folder.dir, "pending", "start.json"), JSON.stringify([makeJob(3)]));
    queue = await EmbeddedQueue.open({ dir: folder.dir });
    expect(await queue.snapshot()).toEqual([]);
    expect(await queue.isActive(makeJob(3).storyKey)).toBe(false);
    expect(readdirSync(join(folder.dir, "pending")).sort()).toEqual(["garbage.json", "start.json"]);
  });
});
