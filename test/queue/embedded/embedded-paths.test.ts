/**
 * The embedded queue's decisions one by one, each staged in one process on a real folder: the
 * rescan timer is set to an hour, so the folder is re-read only when a test says so (or a job is
 * enqueued, taken or finished), and every race is a state the test puts the folder in first.
 */
import { jest } from "@jest/globals";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { exec } from "../../../src/exec/index.js";
import { useFileSystem } from "../../../src/files/atomic-file.js";
import {
  EmbeddedQueue,
  newLockOwner,
  retireLockOwner,
  type EmbeddedQueueOptions,
  type JobLease,
  type QuarantinedJob,
  type StoryJob,
} from "../../../src/queue/index.js";
import { recordingFileSystem } from "../../support/recording-fs.js";
import { deferred, makeJob, tempDir } from "../helpers.js";
import { until } from "../../support/poll.js";

const HOUR = 3_600_000;
const idFor = (n: number): string => `${String(1_700_000_000_000 + n).padStart(15, "0")}-${String(n).padStart(6, "0")}-0000000${n}`;
const jobFile = (id: string, job: StoryJob, extra: Record<string, unknown> = {}): string =>
  `${JSON.stringify({ id, job, state: "queued", interruptions: 0, ...extra })}\n`;

/** Starts `queue` with a worker that holds each job it runs until `release` resolves; `running` resolves when one starts. */
function startHolding(queue: EmbeddedQueue): { release: ReturnType<typeof deferred>; running: ReturnType<typeof deferred> } {
  const release = deferred();
  const running = deferred();
  queue.start(async () => {
    running.resolve();
    await release.promise;
  });
  return { release, running };
}

describe("EmbeddedQueue, path by path", () => {
  let dir: string;
  let remove: () => Promise<void>;
  const opened: EmbeddedQueue[] = [];
  const errors: string[] = [];
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-queue-paths-"));
    errors.length = 0;
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    for (const queue of opened.splice(0)) await queue.close({ abortRunning: true });
    await remove();
  });
  async function openQueue(options: Partial<EmbeddedQueueOptions> = {}): Promise<EmbeddedQueue> {
    const queue = await EmbeddedQueue.open({ dir, rescanMs: HOUR, log: { error: (message) => errors.push(message) }, ...options });
    opened.push(queue);
    return queue;
  }
  const jobsDir = (): string => join(dir, "jobs");
  const locks = (): string[] => readdirSync(join(dir, "locks"));
  const quarantined = (): string[] => (existsSync(join(dir, "quarantine")) ? readdirSync(join(dir, "quarantine")) : []);
  const jobNames = (): string[] => readdirSync(jobsDir()).filter((name) => name.endsWith(".json"));
  const accepted = async (queue: EmbeddedQueue, job: StoryJob): Promise<string> => {
    const outcome = await queue.enqueue(job);
    if (!outcome.accepted) throw new Error(`not accepted: ${outcome.reason}`);
    return outcome.jobId;
  };

  it("runs one job at a time unless told more, whatever number below one it is given", async () => {
    for (const [concurrency, expected] of [
      [undefined, 1],
      [0, 1],
      [-2, 1],
      [3, 3],
    ] as const) {
      const queue = await openQueue(concurrency === undefined ? {} : { concurrency });
      expect(queue.concurrency).toBe(expected);
    }
    const queue = await openQueue();
    const gates = [deferred(), deferred()];
    const started: number[] = [];
    queue.start(async (lease) => {
      started.push(lease.job.issue.number);
      await gates[lease.job.issue.number - 1]?.promise;
    });
    try {
      await queue.enqueue(makeJob(1));
      await queue.enqueue(makeJob(2));
      await until("the first job running", () => started.length === 1);
      // The second waits for the first: the pump ran after both enqueues and took only one.
      expect(started).toEqual([1]);
      gates[0]?.resolve();
      await until("the second job running", () => started.length === 2);
    } finally {
      for (const gate of gates) gate.resolve();
    }
    await queue.idle();
  });

  it("tells the quarantines found at open to its first listener that takes them, once", async () => {
    await (await openQueue()).close();
    opened.splice(0);
    writeFileSync(join(jobsDir(), `${idFor(1)}.json`), jobFile(idFor(1), makeJob(1)).slice(0, 40));
    const queue = await openQueue();
    expect(errors).toEqual([expect.stringContaining(`queue: quarantine: moved queue/jobs/${idFor(1)}.json: not JSON`)]);
    const told: QuarantinedJob[] = [];
    queue.listen({ onWriteFailure: () => undefined });
    queue.listen({ onQuarantine: (quarantined) => told.push(quarantined) });
    expect(told).toEqual([expect.objectContaining({ file: `${idFor(1)}.json`, reason: expect.stringContaining("not JSON") })]);
    queue.listen({ onQuarantine: (quarantined) => told.push(quarantined) });
    expect(told).toHaveLength(1);
  });

  it("tells a listener given at open, naming the story in the log", async () => {
    await (await openQueue()).close();
    opened.splice(0);
    writeFileSync(join(jobsDir(), `${idFor(1)}.json`), jobFile(idFor(1), makeJob(4), { state: "done" }));
    const told: string[] = [];
    await openQueue({ onQuarantine: (quarantined) => told.push(quarantined.file) });
    expect(told).toEqual([`${idFor(1)}.json`]);
    expect(errors).toEqual([
      `queue: quarantine: moved queue/jobs/${idFor(1)}.json: $.state: must be one of "queued", "running" to queue/quarantine/${idFor(1)}.json (story acme/widgets#4)`,
    ]);
  });

  it("refuses jobs once closed", async () => {
    const queue = await openQueue();
    await queue.close();
    await expect(queue.enqueue(makeJob(1))).rejects.toThrow("queue is closed");
    expect(jobNames()).toEqual([]);
  });

  it("lets go of a story whose job file could not be written, and takes it when it can", async () => {
    const queue = await openQueue();
    rmSync(jobsDir(), { recursive: true });
    await expect(queue.enqueue(makeJob(1, "d-1"))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await queue.isActive("acme/widgets#1")).toBe(false);
    expect(queue.jobs()).toEqual([]);
    mkdirSync(jobsDir());
    // The failed delivery was not remembered: GitHub's redelivery is taken.
    expect((await queue.enqueue(makeJob(1, "d-1"))).accepted).toBe(true);
  });

  it("remembers the delivery of a job refused as already active, and the event of an accepted one", async () => {
    const queue = await openQueue();
    const job = { ...makeJob(1, "d-1"), eventKey: "issues.labeled:acme/widgets#1:story:1" };
    await accepted(queue, job);
    expect(await queue.enqueue(makeJob(1, "d-2"))).toEqual({ accepted: false, reason: "already-active" });
    await until("d-2 written to the log", () => readFileSync(join(dir, "deliveries.log"), "utf8").includes("d-2\n"));
    expect(await queue.enqueue(makeJob(1, "d-2"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(await queue.enqueue({ ...job, deliveryId: "d-3" })).toEqual({ accepted: false, reason: "duplicate-delivery" });
    // Only the event's key: a replay of another event of the story's is a new delivery.
    expect(await queue.enqueue({ ...makeJob(2, "d-3"), eventKey: "issues.labeled:acme/widgets#2:story:1" })).toMatchObject({ accepted: true });
  });

  it("lists its jobs oldest first, also one it learnt of later from the folder", async () => {
    const queue = await openQueue();
    const other = await openQueue();
    const older = await accepted(other, makeJob(1));
    const newer = await accepted(queue, makeJob(2));
    await queue.rescan();
    expect(queue.jobs().map((record) => record.id)).toEqual([older, newer]);
    expect(await queue.isActive("acme/widgets#1")).toBe(true);
    expect((await queue.snapshot()).map((view) => [view.jobId, view.state, "startedAt" in view])).toEqual([
      [older, "queued", false],
      [newer, "queued", false],
    ]);
  });

  it("forgets a queued job another process finished, but not one it runs itself", async () => {
    const queue = await openQueue();
    const other = await openQueue();
    const { release, running } = startHolding(queue);
    try {
      const mine = await accepted(queue, makeJob(1));
      await running.promise;
      const theirs = await accepted(other, makeJob(2));
      await queue.rescan();
      expect(queue.jobs().map((record) => record.id)).toEqual([mine, theirs]);
      // Both files gone (the other process finished its job; an operator removed this one's).
      rmSync(join(jobsDir(), `${theirs}.json`));
      rmSync(join(jobsDir(), `${mine}.json`));
      await queue.rescan();
      expect(queue.jobs().map((record) => record.id)).toEqual([mine]);
      expect(await queue.isActive("acme/widgets#1")).toBe(true);
      expect(await queue.isActive("acme/widgets#2")).toBe(false);
      expect(await queue.enqueue(makeJob(1, "d-again"))).toEqual({ accepted: false, reason: "already-active" });
    } finally {
      release.resolve();
    }
    await queue.idle();
  });

  /**
   * A job whose file is still being written, held there deterministically: the queue's file
   * thread is kept inside a read of a FIFO (a rescan's), so the enqueue's write waits behind it.
   */
  it("neither drops nor takes a job whose file is still being written", async () => {
    const queue = await openQueue();
    const fifo = join(jobsDir(), `${idFor(9)}.json`);
    expect((await exec(["mkfifo", fifo], { cwd: dir })).exitCode).toBe(0);
    const scanning = queue.rescan();
    // Opening the FIFO to write waits for its reader: the file thread is in its read now.
    const writer = await open(fifo, "w");
    const leases: JobLease[] = [];
    let enqueuing: ReturnType<EmbeddedQueue["enqueue"]>;
    try {
      await rm(fifo);
      enqueuing = queue.enqueue(makeJob(1));
      // The folder holds no file of it yet: a rescan must not take the job as finished elsewhere...
      await queue.rescan();
      expect(jobNames()).toEqual([]);
      expect(queue.jobs().map((record) => record.job.storyKey)).toEqual(["acme/widgets#1"]);
      expect(await queue.isActive("acme/widgets#1")).toBe(true);
      // ...and a worker starting now must not claim it (its file would read as gone).
      queue.start(async (lease) => {
        leases.push(lease);
      });
      await queue.idle();
      expect(leases).toEqual([]);
    } finally {
      await writer.writeFile("");
      await writer.close();
    }
    await scanning;
    expect((await enqueuing).accepted).toBe(true);
    await queue.idle();
    expect(leases.map((lease) => lease.job.storyKey)).toEqual(["acme/widgets#1"]);
  });

  /**
   * The same FIFO, read twice: by the rescan's bulk read and by its quarantine. Between the two
   * the enqueue's write, waiting behind the first read, lands; the rescan, whose listing came
   * before the job existed, must not take the job for one finished elsewhere.
   */
  it("keeps a job enqueued and written while a rescan that listed the folder before it is still running", async () => {
    const queue = await openQueue();
    const fifo = join(jobsDir(), `${idFor(9)}.json`);
    expect((await exec(["mkfifo", fifo], { cwd: dir })).exitCode).toBe(0);
    const scanning = queue.rescan();
    const bulkRead = await open(fifo, "w");
    const enqueuing = queue.enqueue(makeJob(1));
    await bulkRead.writeFile("");
    await bulkRead.close();
    const outcome = await enqueuing;
    expect(outcome.accepted).toBe(true);
    // The rescan is inside its quarantine's read of the FIFO now: let it finish.
    const quarantineRead = await open(fifo, "w");
    await quarantineRead.close();
    await scanning;
    expect(queue.jobs().map((record) => record.id)).toEqual([outcome.accepted ? outcome.jobId : ""]);
    expect(await queue.isActive("acme/widgets#1")).toBe(true);
    expect(quarantined()).toEqual([`${idFor(9)}.json`]);
  });

  it("does not read again the file of a job it knows: a rescan leaves a running job's torn file alone", async () => {
    const queue = await openQueue();
    const { release, running } = startHolding(queue);
    try {
      const id = await accepted(queue, makeJob(1));
      await running.promise;
      writeFileSync(join(jobsDir(), `${id}.json`), "");
      await queue.rescan();
      expect([errors, quarantined(), jobNames()]).toEqual([[], [], [`${id}.json`]]);
    } finally {
      release.resolve();
    }
    await queue.idle();
    expect(jobNames()).toEqual([]);
  });

  it("leaves a job whose lock a live holder has, and takes it on the rescan after the holder is gone", async () => {
    const queue = await openQueue();
    const holder = newLockOwner();
    try {
      const id = await accepted(queue, makeJob(1));
      writeFileSync(join(dir, "locks", `${id}.lock`), JSON.stringify({ ...holder, at: new Date().toISOString() }));
      expect(await queue.holder(id)).toEqual(holder);
      const leases: JobLease[] = [];
      queue.start(async (lease) => {
        leases.push(lease);
      });
      await queue.idle();
      expect(leases).toEqual([]);
      retireLockOwner(holder);
      expect(await queue.holder(id)).toBeUndefined();
      // Still set aside until the folder is read again.
      await queue.enqueue(makeJob(2));
      await queue.idle();
      expect(leases.map((lease) => lease.job.issue.number)).toEqual([2]);
      await queue.rescan();
      await queue.enqueue(makeJob(3));
      await until("the freed job and the third ran", () => leases.length === 3);
      expect(leases.map((lease) => lease.job.issue.number)).toEqual([2, 1, 3]);
    } finally {
      retireLockOwner(holder);
    }
  });

  it("lets go of a job whose file is gone when it comes to take it, and quarantines one it cannot read then", async () => {
    const told: QuarantinedJob[] = [];
    const queue = await openQueue({ onQuarantine: (quarantined) => told.push(quarantined) });
    const gone = await accepted(queue, makeJob(1));
    const torn = await accepted(queue, makeJob(2));
    rmSync(join(jobsDir(), `${gone}.json`));
    writeFileSync(join(jobsDir(), `${torn}.json`), "");
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
    });
    await queue.idle();
    expect(leases).toEqual([]);
    expect(queue.jobs()).toEqual([]);
    expect(locks()).toEqual([]);
    expect([await queue.isActive("acme/widgets#1"), await queue.isActive("acme/widgets#2")]).toEqual([false, false]);
    expect(told).toEqual([{ file: `${torn}.json`, reason: `queue/jobs/${torn}.json: empty` }]);
    expect(errors).toEqual([`queue: quarantine: moved queue/jobs/${torn}.json: empty to queue/quarantine/${torn}.json`]);
  });

  it("gives back the lock of a job whose claim could not be written, tells its story once, and takes it later", async () => {
    const failures: Array<[string, string | undefined]> = [];
    const queue = await openQueue({ onWriteFailure: (job, error) => failures.push([job.storyKey, (error as NodeJS.ErrnoException).code]) });
    const id = await accepted(queue, makeJob(1));
    const full = recordingFileSystem(jobsDir(), {
      open: (name) => {
        if (name === `${id}.json.tmp`) throw Object.assign(new Error("no space left (staged)"), { code: "ENOSPC" });
      },
    });
    const previous = useFileSystem(full.fs);
    const leases: JobLease[] = [];
    try {
      queue.start(async (lease) => {
        leases.push(lease);
      });
      await queue.idle();
      await queue.rescan();
      await queue.enqueue(makeJob(2));
      await queue.idle();
    } finally {
      useFileSystem(previous);
    }
    // The second job, enqueued meanwhile, was taken past the first.
    expect(leases.map((lease) => lease.job.issue.number)).toEqual([2]);
    expect(failures).toEqual([["acme/widgets#1", "ENOSPC"]]);
    expect(
      errors.filter((line) => line.startsWith(`queue: claiming job ${id} of acme/widgets#1 (it stays queued and is tried again): no space left`)),
    ).toHaveLength(2);
    expect(locks()).toEqual([]);
    await queue.rescan();
    await queue.enqueue(makeJob(3));
    await until("all three ran", () => leases.length === 3);
    expect(leases.map((lease) => [lease.job.issue.number, lease.interruptions])).toEqual([
      [2, 0],
      [1, 0],
      [3, 0],
    ]);
  });

  it("takes re-admissions first, then jobs oldest first", async () => {
    const queue = await openQueue();
    for (const [issue, kind] of [
      [1, "start"],
      [2, "retry-blocked"],
      [3, "start"],
      [4, "retry-blocked"],
    ] as const)
      await queue.enqueue(makeJob(issue, `d-${issue}`, { kind }));
    const started: number[] = [];
    queue.start(async (lease) => {
      started.push(lease.job.issue.number);
    });
    await until("all four ran", () => started.length === 4);
    expect(started).toEqual([2, 4, 1, 3]);
  });

  it("finishes a job whose worker failed, logging the failure, and keeps a job stopped by close on disk", async () => {
    const queue = await openQueue();
    const id = await accepted(queue, makeJob(1));
    queue.start(async () => {
      throw "not an Error";
    });
    await until("the job finished", async () => !(await queue.isActive("acme/widgets#1")));
    await queue.idle();
    expect(errors).toEqual([`queue: job ${id}: not an Error`]);
    expect([jobNames(), locks()]).toEqual([[], []]);

    const second = await openQueue();
    const entered = deferred();
    second.start(async (_lease, signal) => {
      entered.resolve();
      await new Promise<void>((done) => signal.addEventListener("abort", () => done()));
    });
    const kept = await accepted(second, makeJob(2));
    await entered.promise;
    expect((await second.snapshot()).map((view) => [view.state, typeof view.startedAt])).toEqual([["running", "string"]]);
    await second.close({ abortRunning: true });
    expect([jobNames(), locks()]).toEqual([[`${kept}.json`], []]);
  });

  it("writes an enqueued job through its file thread, not the caller's own writes", async () => {
    const queue = await openQueue();
    const seen = recordingFileSystem(jobsDir());
    const previous = useFileSystem(seen.fs);
    let id: string;
    try {
      id = await accepted(queue, makeJob(1));
    } finally {
      useFileSystem(previous);
    }
    // A write of the caller's own (src/files, through its seam) would be listed: open, write, fsync, close, rename.
    expect(seen.events).toEqual([]);
    expect(jobNames()).toEqual([`${id}.json`]);
  });

  it("reads the folder again on its timer, every 2 s unless told, taking the jobs it finds, and logs a failed read", async () => {
    const intervals = jest.spyOn(globalThis, "setInterval");
    const queue = await openQueue();
    const other = await openQueue();
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
    });
    expect(intervals.mock.calls.map((call) => call[1])).toEqual([HOUR]);
    const tick = intervals.mock.calls[0]?.[0] as () => void;
    await accepted(other, makeJob(1));
    await queue.idle();
    expect(leases).toEqual([]);
    // The timer's work, run now rather than in an hour: the rescan finds the other process's job and the pump takes it.
    tick();
    await until("the job found by the timer's rescan ran", () => leases.length === 1);
    await queue.idle();
    expect(errors).toEqual([]);
    rmSync(jobsDir(), { recursive: true });
    tick();
    await until("the failed rescan logged", () => errors.length > 0);
    expect(errors).toEqual([expect.stringMatching(/^queue: rescan: ENOENT/)]);
    (await openQueue({ rescanMs: undefined })).start(async () => undefined);
    expect(intervals.mock.calls.map((call) => call[1])).toEqual([HOUR, 2000]);
  });

  it("counts an interruption for a job it finds running under no live lock, and none for a queued one", async () => {
    await (await openQueue()).close();
    opened.splice(0);
    writeFileSync(
      join(jobsDir(), `${idFor(1)}.json`),
      jobFile(idFor(1), makeJob(1), { state: "running", interruptions: 1, startedAt: "2026-01-01T00:00:00.000Z" }),
    );
    writeFileSync(join(jobsDir(), `${idFor(2)}.json`), jobFile(idFor(2), makeJob(2), { interruptions: 1 }));
    const queue = await openQueue({ concurrency: 2 });
    const release = deferred();
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
      await release.promise;
    });
    try {
      await until("both jobs running", () => leases.length === 2);
      expect(leases.map((lease) => [lease.job.issue.number, lease.interruptions])).toEqual([
        [1, 2],
        [2, 1],
      ]);
      // What this process knows is what it wrote: both running, with their counts.
      expect(queue.jobs().map((record) => [record.state, record.interruptions, record.startedAt !== "2026-01-01T00:00:00.000Z"])).toEqual([
        ["running", 2, true],
        ["running", 1, true],
      ]);
    } finally {
      release.resolve();
    }
    await queue.idle();
  });

  it("logs a claim that could not be written, and a lock it could not give back, when nobody listens for failed writes", async () => {
    const queue = await openQueue();
    const id = await accepted(queue, makeJob(1));
    const full = recordingFileSystem(jobsDir(), {
      open: (name) => {
        if (name !== `${id}.json.tmp`) return;
        // The lock, taken, turns into a folder: giving it back cannot read it.
        rmSync(join(dir, "locks", `${id}.lock`));
        mkdirSync(join(dir, "locks", `${id}.lock`));
        throw Object.assign(new Error("no space left (staged)"), { code: "ENOSPC" });
      },
    });
    const previous = useFileSystem(full.fs);
    try {
      queue.start(async () => undefined);
      await queue.idle();
    } finally {
      useFileSystem(previous);
    }
    expect(errors).toEqual([
      expect.stringMatching(new RegExp(`^queue: releasing ${id}: EISDIR`)),
      `queue: claiming job ${id} of acme/widgets#1 (it stays queued and is tried again): no space left (staged)`,
    ]);
  });

  it("logs what a worker threw that is not an Error by its text", async () => {
    const queue = await openQueue();
    const thrown: unknown[] = [null, { reason: "an object" }, "a string"];
    const ids: string[] = [];
    for (const issue of [1, 2, 3]) ids.push(await accepted(queue, makeJob(issue)));
    queue.start(async (lease) => {
      throw thrown[lease.job.issue.number - 1];
    });
    await until("the three jobs finished", () => queue.jobs().length === 0);
    await queue.idle();
    expect(errors).toEqual([`queue: job ${ids[0]}: null`, `queue: job ${ids[1]}: [object Object]`, `queue: job ${ids[2]}: a string`]);
    expect([jobNames(), locks()]).toEqual([[], []]);
  });

  it("leaves a job whose file it cannot read for a reason other than its content queued, saying why", async () => {
    const failures: string[] = [];
    const queue = await openQueue({ onWriteFailure: (job) => failures.push(job.storyKey) });
    // Written by the test, not enqueued: no flush of the queue's file thread is still to come for it.
    const id = idFor(1);
    writeFileSync(join(jobsDir(), `${id}.json`), jobFile(id, makeJob(1)));
    await queue.rescan();
    rmSync(join(jobsDir(), `${id}.json`));
    mkdirSync(join(jobsDir(), `${id}.json`));
    queue.start(async () => undefined);
    await queue.idle();
    expect(errors).toEqual([
      expect.stringMatching(new RegExp(`^queue: claiming job ${id} of acme/widgets#1 \\(it stays queued and is tried again\\): EISDIR`)),
    ]);
    expect(failures).toEqual(["acme/widgets#1"]);
    expect(queue.jobs().map((record) => record.id)).toEqual([id]);
    expect(quarantined()).toEqual([]);
  });

  /** A FIFO at the job's name holds the claim's read until the test has removed it: the file is torn, then gone before its quarantine. */
  it("lets go quietly of a job whose unreadable file is gone before it is quarantined", async () => {
    const told: QuarantinedJob[] = [];
    const queue = await openQueue({ onQuarantine: (quarantined) => told.push(quarantined) });
    // Written by the test, not enqueued: a flush of the queue's file thread still to come would open the FIFO too.
    const id = idFor(1);
    writeFileSync(join(jobsDir(), `${id}.json`), jobFile(id, makeJob(1)));
    await queue.rescan();
    const fifo = join(jobsDir(), `${id}.json`);
    rmSync(fifo);
    expect((await exec(["mkfifo", fifo], { cwd: dir })).exitCode).toBe(0);
    queue.start(async () => undefined);
    // Opening the FIFO to write waits for its reader: the claim's read.
    const writer = await open(fifo, "w");
    await rm(fifo);
    await writer.writeFile("{");
    await writer.close();
    await queue.idle();
    expect([errors, told, queue.jobs(), locks()]).toEqual([[], [], [], []]);
    expect(quarantined()).toEqual([]);
    expect(await queue.isActive("acme/widgets#1")).toBe(false);
  });

  it("logs a lock it could not give back when a job finished, and takes the next job", async () => {
    const queue = await openQueue();
    const first = await accepted(queue, makeJob(1));
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
      if (lease.jobId !== first) return;
      // The lock turns into a folder while the job runs: releasing it cannot read it.
      rmSync(join(dir, "locks", `${first}.lock`));
      mkdirSync(join(dir, "locks", `${first}.lock`));
    });
    await queue.idle();
    expect(errors).toEqual([expect.stringMatching(new RegExp(`^queue: finishing job ${first}: EISDIR`))]);
    expect([jobNames(), await queue.isActive("acme/widgets#1")]).toEqual([[], false]);
    await accepted(queue, makeJob(2));
    await queue.idle();
    expect(leases.map((lease) => lease.job.issue.number)).toEqual([1, 2]);
  });

  it("keeps a story active when one job of it finishes while another process's job of it is queued", async () => {
    const queue = await openQueue();
    const other = await openQueue();
    const release = deferred();
    const hold = deferred();
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
      await (leases.length === 1 ? release.promise : hold.promise);
    });
    try {
      const mine = await accepted(queue, makeJob(1, "d-1"));
      await until("the first job running", () => leases.length === 1);
      // The other process did not know of it: it takes the story too.
      const theirs = await accepted(other, makeJob(1, "d-2"));
      await queue.rescan();
      expect(queue.jobs().map((record) => record.id)).toEqual([mine, theirs]);
      release.resolve();
      await until("the other process's job running here", () => leases.length === 2);
      expect(leases.map((lease) => lease.jobId)).toEqual([mine, theirs]);
      expect(await queue.isActive("acme/widgets#1")).toBe(true);
    } finally {
      release.resolve();
      hold.resolve();
    }
    await queue.idle();
    expect(await queue.isActive("acme/widgets#1")).toBe(false);
  });

  it("logs a delivery id it could not append to the log", async () => {
    const queue = await openQueue({ deliveryMemory: 1 });
    // Two ids in a log that keeps one: the second append compacts the log, and the compaction's write fails.
    const full = recordingFileSystem(dir, {
      open: (name) => {
        if (name === "deliveries.log.tmp") throw Object.assign(new Error("no space left (staged)"), { code: "ENOSPC" });
      },
    });
    const previous = useFileSystem(full.fs);
    try {
      await accepted(queue, makeJob(1, "d-1"));
      await accepted(queue, makeJob(2, "d-2"));
      await until("the failed append logged", () => errors.length > 0);
    } finally {
      useFileSystem(previous);
    }
    expect(errors[0]).toMatch(/^queue: recording delivery d-[12]: no space left \(staged\)$/);
  });

  it("lets a running job finish when closed without aborting it, and starts none after", async () => {
    const queue = await openQueue({ concurrency: 2 });
    const first = await accepted(queue, makeJob(1));
    const second = await accepted(queue, makeJob(2));
    const leases: JobLease[] = [];
    const aborted: boolean[] = [];
    queue.start(async (lease, signal) => {
      leases.push(lease);
      await new Promise((resolve) => setImmediate(resolve));
      aborted.push(signal.aborted);
    });
    // The pass that start() began is inside the first job's claim: it takes that one and stops.
    await queue.close();
    expect(leases.map((lease) => lease.jobId)).toEqual([first]);
    expect(aborted).toEqual([false]);
    expect([jobNames(), locks()]).toEqual([[`${second}.json`], []]);
  });

  it("writes its errors to stderr when it is given no log", async () => {
    const written: string[] = [];
    jest.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const queue = await EmbeddedQueue.open({ dir, rescanMs: HOUR });
    opened.push(queue);
    const id = await accepted(queue, makeJob(1));
    queue.start(async () => {
      throw new Error("worker failed");
    });
    await until("the job finished", async () => !(await queue.isActive("acme/widgets#1")));
    await queue.idle();
    expect(written.filter((chunk) => chunk.startsWith("queue:"))).toEqual([`queue: job ${id}: worker failed\n`]);
  });
});
