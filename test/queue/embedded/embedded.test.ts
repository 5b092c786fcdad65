import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EmbeddedQueue, type JobLease } from "../../../src/queue/index.js";
import { appearedOnlyByRename, folderEvents, writtenNames } from "../../support/fs-events.js";
import { deferred, makeJob, tempDir } from "../helpers.js";
import { until } from "../../support/poll.js";

describe("EmbeddedQueue", () => {
  let dir: string;
  let remove: () => Promise<void>;
  const open: EmbeddedQueue[] = [];

  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-queue-"));
  });
  afterEach(async () => {
    for (const queue of open.splice(0)) await queue.close({ abortRunning: true });
    await remove();
  });

  async function openQueue(concurrency = 1): Promise<EmbeddedQueue> {
    const queue = await EmbeddedQueue.open({ dir, concurrency, rescanMs: 50 });
    open.push(queue);
    return queue;
  }

  it("accepts a job, refuses a redelivery and a second job of an active story", async () => {
    const queue = await openQueue();
    const first = await queue.enqueue(makeJob(1, "d-1"));
    expect(first).toEqual({ accepted: true, jobId: expect.any(String) });
    expect(await queue.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await queue.enqueue(makeJob(1, "d-2"))).toEqual({ accepted: false, reason: "already-active" });
    expect(await queue.isActive("acme/widgets#1")).toBe(true);
    expect(await queue.isActive("acme/widgets#2")).toBe(false);
    expect((await queue.enqueue(makeJob(2, "d-3"))).accepted).toBe(true);
    const files = (await readdir(join(dir, "jobs"))).filter((name) => name.endsWith(".json"));
    expect(files).toHaveLength(2);
  });

  it("writes a job file only through a temp file renamed onto it, when queued and when taken", async () => {
    const queue = await openQueue();
    const jobs = join(dir, "jobs");
    let jobId = "";
    const queued = await folderEvents(jobs, async () => {
      const outcome = await queue.enqueue(makeJob(1, "d-1"));
      if (outcome.accepted) jobId = outcome.jobId;
    });
    expect(jobId).not.toBe("");
    // A write in place, torn by kill -9 half-way, would be a job skipped on rescan: a story lost.
    expect(appearedOnlyByRename(queued, `${jobId}.json`)).toBe(true);
    expect(writtenNames(queued).every((name) => name.startsWith(`${jobId}.json.`) && name.endsWith(".tmp"))).toBe(true);
    expect(writtenNames(queued).length).toBeGreaterThan(0);

    const release = deferred();
    const taken = await folderEvents(jobs, async () => {
      queue.start(() => release.promise);
      await until("the job taken", async () => (await readFile(join(jobs, `${jobId}.json`), "utf8")).includes('"running"'));
    });
    expect(appearedOnlyByRename(taken, `${jobId}.json`)).toBe(true);
    expect(writtenNames(taken).length).toBeGreaterThan(0);
    release.resolve();
    await queue.idle();
  });

  it("lets a story be queued again once its job finished", async () => {
    const queue = await openQueue();
    const ran: string[] = [];
    queue.start(async (lease) => {
      ran.push(lease.job.deliveryId);
    });
    await queue.enqueue(makeJob(1, "d-1"));
    await until("first run", () => ran.length === 1);
    await queue.idle();
    expect(await queue.isActive("acme/widgets#1")).toBe(false);
    expect((await queue.enqueue(makeJob(1, "d-2"))).accepted).toBe(true);
    await until("second run", () => ran.length === 2);
    expect(ran).toEqual(["d-1", "d-2"]);
    await queue.idle();
    expect((await readdir(join(dir, "jobs"))).filter((name) => name.endsWith(".json"))).toEqual([]);
  });

  it("runs at most `concurrency` jobs at once, in enqueue order", async () => {
    const queue = await openQueue(2);
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    let runningNow = 0;
    let most = 0;
    queue.start(async (lease) => {
      runningNow += 1;
      most = Math.max(most, runningNow);
      started.push(lease.job.issue.number);
      await gates[lease.job.issue.number - 1]?.promise;
      runningNow -= 1;
    });
    for (const issue of [1, 2, 3]) await queue.enqueue(makeJob(issue));
    await until("two started", () => started.length === 2);
    expect(started).toEqual([1, 2]);
    gates[0]?.resolve();
    await until("third started", () => started.length === 3);
    gates[1]?.resolve();
    gates[2]?.resolve();
    await queue.idle();
    expect(most).toBe(2);
  });

  it("keeps queued jobs and deliveries across a restart", async () => {
    const first = await openQueue();
    await first.enqueue(makeJob(1, "d-1"));
    await first.enqueue(makeJob(2, "d-2"));
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = await openQueue();
    expect(await second.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await second.enqueue(makeJob(1, "d-9"))).toEqual({ accepted: false, reason: "already-active" });
    const leases: JobLease[] = [];
    second.start(async (lease) => {
      leases.push(lease);
    });
    await until("both jobs", () => leases.length === 2);
    expect(leases.map((lease) => [lease.job.issue.number, lease.interruptions])).toEqual([
      [1, 0],
      [2, 0],
    ]);
  });

  it("refuses a redelivery after a restart, also of a delivery whose job already finished", async () => {
    const queue = await openQueue();
    const ran: string[] = [];
    queue.start(async (lease) => {
      ran.push(lease.job.deliveryId);
    });
    expect((await queue.enqueue(makeJob(1, "d-done"))).accepted).toBe(true);
    await until("the job run", () => ran.length === 1);
    await queue.idle();
    // Finished: no job file is left to carry its delivery id, only the delivery log.
    expect((await readdir(join(dir, "jobs"))).filter((name) => name.endsWith(".json"))).toEqual([]);
    await queue.close();
    open.splice(0);
    const restarted = await openQueue();
    expect(await restarted.enqueue(makeJob(1, "d-done"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect((await restarted.enqueue(makeJob(1, "d-new"))).accepted).toBe(true);
  });

  it("bounds the delivery memory and drops a torn last line", async () => {
    const queue = await EmbeddedQueue.open({ dir, deliveryMemory: 3 });
    open.push(queue);
    for (let issue = 1; issue <= 7; issue += 1) await queue.enqueue(makeJob(issue, `d-${issue}`));
    await queue.close();
    open.splice(0);
    const lines = (await readFile(join(dir, "deliveries.log"), "utf8")).split("\n").filter(Boolean);
    expect(lines.length).toBeLessThanOrEqual(6);
    await writeFile(join(dir, "deliveries.log"), `${lines.join("\n")}\nd-tor`);
    const reopened = await EmbeddedQueue.open({ dir, deliveryMemory: 3 });
    open.push(reopened);
    expect(await reopened.enqueue(makeJob(7, "d-7"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    // d-1 was forgotten (bound 3); its story is still active, so it is refused for that reason instead.
    expect(await reopened.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "already-active" });
    expect(await reopened.enqueue(makeJob(8, "d-tor"))).toEqual({ accepted: true, jobId: expect.any(String) });
  });

  it("resumes a job left running by a closed queue, counting the interruption", async () => {
    const first = await openQueue();
    const entered = deferred();
    first.start(async (_lease, signal) => {
      entered.resolve();
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
    });
    await first.enqueue(makeJob(5));
    await entered.promise;
    await first.close({ abortRunning: true });
    open.splice(open.indexOf(first), 1);

    const second = await openQueue();
    const leases: JobLease[] = [];
    second.start(async (lease) => {
      leases.push(lease);
    });
    await until("resumed job", () => leases.length === 1);
    expect(leases[0]?.interruptions).toBe(1);
    expect(leases[0]?.job.issue.number).toBe(5);
  });
});
