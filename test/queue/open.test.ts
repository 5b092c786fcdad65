/** `openStoryQueue` with the embedded adapter: every setting of the configuration reaches the queue. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedQueue, openStoryQueue, type JobLease, type StoryQueue } from "../../src/queue/index.js";
import { deferred, makeJob, tempDir } from "./helpers.js";
import { until } from "../support/poll.js";

describe("openStoryQueue (embedded)", () => {
  let dir: string;
  let remove: () => Promise<void>;
  let queue: StoryQueue | undefined;

  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-open-"));
  });
  afterEach(async () => {
    await queue?.close({ abortRunning: true });
    queue = undefined;
    await remove();
  });

  it("opens the folder's queue with its concurrency and installation slots", async () => {
    queue = await openStoryQueue({ kind: "embedded", dir, concurrency: 2, installationSlots: 1 });
    expect(queue).toBeInstanceOf(EmbeddedQueue);
    expect(queue.concurrency).toBe(2);
    const leases: JobLease[] = [];
    const release = deferred();
    queue.start(async (lease) => {
      leases.push(lease);
      await release.promise;
    });
    await queue.enqueue(makeJob(1, "d-1", { installationId: 1 }));
    await queue.enqueue(makeJob(2, "d-2", { installationId: 1 }));
    await queue.enqueue(makeJob(3, "d-3", { installationId: 2 }));
    // Two workers, one slot per installation: issue 1 and issue 3 run, issue 2 waits for its installation.
    await until("one job of each installation running", () => leases.length === 2);
    expect(leases.map((lease) => lease.job.issue.number).sort()).toEqual([1, 3]);
    release.resolve();
    await until("the waiting job ran", () => leases.length === 3);
    expect(leases[2]?.job.issue.number).toBe(2);
  });

  it("runs as many jobs of one installation as workers when no slot limit is set", async () => {
    queue = await openStoryQueue({ kind: "embedded", dir, concurrency: 2 });
    const leases: JobLease[] = [];
    const release = deferred();
    queue.start(async (lease) => {
      leases.push(lease);
      await release.promise;
    });
    await queue.enqueue(makeJob(1, "d-1"));
    await queue.enqueue(makeJob(2, "d-2"));
    await until("both jobs running", () => leases.length === 2);
    release.resolve();
  });

  it("writes the queue's errors to the log it is given", async () => {
    const first = await openStoryQueue({ kind: "embedded", dir, concurrency: 1 });
    await first.close();
    writeFileSync(join(dir, "jobs", "000000000000001-000001-00000001.json"), "");
    const errors: string[] = [];
    queue = await openStoryQueue({ kind: "embedded", dir, concurrency: 1 }, { error: (message) => errors.push(message) });
    expect(errors.some((line) => line.includes("queue/quarantine/000000000000001-000001-00000001.json"))).toBe(true);
  });
});
