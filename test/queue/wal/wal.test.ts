import { jest } from "@jest/globals";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { exec, type ExecResult } from "../../../src/exec/index.js";
import { EmbeddedQueue, type JobLease } from "../../../src/queue/index.js";
import { decodeChunk, encodeEntry, encodeJobLine } from "../../../src/queue/wal/index.js";
import { makeJob, tempDir } from "../helpers.js";
import { loggedJobs, queueDrained } from "../../e2e/scenario.js";
import { until } from "../../support/poll.js";

// Hang guard for the tests with a child process; the tests poll.
jest.setTimeout(300_000);

const CHILD = resolve("test/queue/wal/wal-child.ts");
/** A log name no live process has: pid 1's start time is not this. */
const DEAD = "999999-deadbeefdeadbeef";

function record(id: string, issue: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, job: makeJob(issue, `dead-${issue}`), state: "queued", interruptions: 0, ...extra };
}

function idFor(n: number): string {
  return `000000000000${String(n).padStart(3, "0")}-000001-deadbeef`;
}

describe("embedded queue with a write-ahead log", () => {
  let dir = "";
  let remove: () => Promise<void> = async () => undefined;
  const open: EmbeddedQueue[] = [];

  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-queue-wal-"));
  });

  afterEach(async () => {
    for (const queue of open.splice(0)) await queue.close({ abortRunning: true });
    await remove();
  });

  async function openQueue(options: { walSegmentBytes?: number } = {}): Promise<EmbeddedQueue> {
    const queue = await EmbeddedQueue.open({ dir, rescanMs: 50, writeAheadLog: true, ...options });
    open.push(queue);
    return queue;
  }

  const jobFiles = (): string[] => readdirSync(join(dir, "jobs")).filter((name) => name.endsWith(".json"));
  const walFiles = (): string[] => readdirSync(join(dir, "wal"));
  const segments = (): string[] => walFiles().filter((name) => name.endsWith(".log"));

  /** Writes a log as a dead process left it: its segment, and a lock naming a dead owner. */
  function deadLog(lines: string): void {
    mkdirSync(join(dir, "wal"), { recursive: true });
    mkdirSync(join(dir, "jobs"), { recursive: true });
    writeFileSync(join(dir, "wal", `${DEAD}.000001.log`), lines);
    writeFileSync(
      join(dir, "wal", `${DEAD}.lock`),
      JSON.stringify({ pid: 999999, startTime: "0:0", instance: "deadbeefdeadbeef", at: new Date().toISOString() }),
    );
  }

  it("answers an enqueue with one appended record and writes the job's file only when a runner claims it", async () => {
    const queue = await openQueue();
    const outcome = await queue.enqueue(makeJob(1, "d-1"));
    expect(outcome.accepted).toBe(true);
    expect(jobFiles()).toEqual([]);
    expect(segments()).toHaveLength(1);
    const [segment] = segments();
    const logged = decodeChunk(readFileSync(join(dir, "wal", segment ?? "")));
    expect(logged.entries).toEqual([
      {
        t: "job",
        id: outcome.accepted ? outcome.jobId : "",
        r: expect.objectContaining({ state: "queued", job: expect.objectContaining({ deliveryId: "d-1" }) }),
      },
    ]);
    expect((await queue.snapshot()).map((view) => view.job.deliveryId)).toEqual(["d-1"]);

    let release: () => void = () => undefined;
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
      await new Promise<void>((done) => (release = done));
    });
    await until("the job taken", () => leases.length === 1);
    expect(JSON.parse(readFileSync(join(dir, "jobs", jobFiles()[0] ?? ""), "utf8"))).toMatchObject({ state: "running" });
    release();
    await until("the job done", () => jobFiles().length === 0);
    await queue.idle();
    // Done: tombstoned in the log, so a replay cannot bring it back.
    const after = decodeChunk(readFileSync(join(dir, "wal", segments()[0] ?? ""))).entries;
    expect(after.map((entry) => entry.t)).toEqual(["job", "done"]);
    await queue.close();
    open.splice(0);
    // Everything settled: the log is gone with its lock.
    expect(walFiles()).toEqual([]);
    const reopened = await openQueue();
    expect(await reopened.snapshot()).toEqual([]);
  });

  it("is drained for the end-to-end probe only once a job that has no file yet is done", async () => {
    // The probe reads `<home>/queue`: this test's folder is the home.
    const queue = await EmbeddedQueue.open({ dir: join(dir, "queue"), rescanMs: 50, writeAheadLog: true });
    open.push(queue);
    const outcome = await queue.enqueue(makeJob(1, "d-1"));
    expect(readdirSync(join(dir, "queue", "jobs"))).toEqual([]);
    expect(loggedJobs(dir)).toEqual([outcome.accepted ? outcome.jobId : ""]);
    let drained = false;
    const probe = queueDrained(dir).then(() => (drained = true));
    let release: (() => void) | undefined;
    queue.start(async () => {
      await new Promise<void>((done) => (release = done));
    });
    // Claimed: its file is written, its record still logged.
    await until("the job taken", () => release !== undefined);
    expect(readdirSync(join(dir, "queue", "jobs"))).toHaveLength(1);
    expect(loggedJobs(dir)).toHaveLength(1);
    expect(drained).toBe(false);
    release?.();
    await probe;
    expect(loggedJobs(dir)).toEqual([]);
    expect(loggedJobs(join(dir, "nowhere"))).toEqual([]);
  });

  it("keeps queued jobs across a close: their files are written, the log removed", async () => {
    const first = await openQueue();
    for (const issue of [1, 2, 3]) await first.enqueue(makeJob(issue, `d-${issue}`));
    await first.close();
    open.splice(0);
    expect(jobFiles()).toHaveLength(3);
    expect(walFiles()).toEqual([]);
    const second = await openQueue();
    expect(await second.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    const ran: string[] = [];
    second.start(async (lease) => {
      ran.push(lease.job.deliveryId);
    });
    await until("three ran", () => ran.length === 3);
    expect(ran).toEqual(["d-1", "d-2", "d-3"]);
  });

  it("takes over a dead process's log: a torn tail and a damaged line are ignored, a tombstoned job is not revived, a job with a file keeps it", async () => {
    const running = idFor(3);
    deadLog(
      encodeJobLine(idFor(1), JSON.stringify(record(idFor(1), 1))) +
        encodeJobLine(idFor(2), JSON.stringify(record(idFor(2), 2))) +
        encodeJobLine(running, JSON.stringify(record(running, 3))) +
        encodeEntry({ t: "done", id: idFor(2) }) +
        encodeEntry({ t: "done", id: idFor(9) }).replace("9", "8") +
        encodeJobLine(idFor(4), JSON.stringify(record(idFor(4), 4))).slice(0, 50),
    );
    // Claimed by the dead process before it died: its file is the job.
    writeFileSync(join(dir, "jobs", `${running}.json`), JSON.stringify(record(running, 3, { state: "running", startedAt: new Date().toISOString() })));
    const queue = await openQueue();
    expect(jobFiles().sort()).toEqual([`${idFor(1)}.json`, `${running}.json`]);
    // The dead log is gone, its lock too; only this queue's own log (if any) is left.
    expect(walFiles().filter((name) => name.startsWith(DEAD))).toEqual([]);
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
    });
    await until("both ran", () => leases.length === 2);
    expect(leases.map((lease) => [lease.job.deliveryId, lease.interruptions])).toEqual([
      ["dead-1", 0],
      ["dead-3", 1],
    ]);
    // The dead process's deliveries are known: a redelivery starts nothing.
    await queue.idle();
    expect(await queue.enqueue(makeJob(2, "dead-2"))).toEqual({ accepted: true, jobId: expect.any(String) });
    expect(await queue.enqueue(makeJob(1, "dead-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
  });

  it("carries a dead log's tombstone forward while the job's record lives in another log", async () => {
    const live = await openQueue();
    const outcome = await live.enqueue(makeJob(1, "d-1"));
    if (!outcome.accepted) throw new Error("not accepted");
    // A dead process finished the job (it claimed it from its file, which it then removed).
    deadLog(encodeEntry({ t: "done", id: outcome.jobId }));
    const other = await openQueue();
    expect(walFiles().filter((name) => name.startsWith(DEAD))).toEqual([]);
    const ran: string[] = [];
    other.start(async (lease) => {
      ran.push(lease.job.deliveryId);
    });
    live.start(async (lease) => {
      ran.push(lease.job.deliveryId);
    });
    await live.close();
    await other.close();
    open.splice(0);
    expect(ran).toEqual([]);
    const third = await openQueue();
    expect(await third.snapshot()).toEqual([]);
  });

  it("lets another process's queue run a logged job, once, and the owner sees it done", async () => {
    const owner = await openQueue();
    const helper = await openQueue();
    const ranBy: string[] = [];
    let release: () => void = () => undefined;
    owner.start(async () => {
      ranBy.push("owner");
      await new Promise<void>((done) => (release = done));
    });
    helper.start(async (lease) => {
      ranBy.push(`helper ${lease.job.deliveryId}`);
    });
    await owner.enqueue(makeJob(1, "d-1"));
    await until("one running", () => ranBy.length >= 1);
    await owner.enqueue(makeJob(2, "d-2"));
    await until("the second taken", () => ranBy.length === 2);
    release();
    await owner.idle();
    await helper.idle();
    await until("both done", async () => (await owner.snapshot()).length === 0);
    expect(ranBy).toHaveLength(2);
    expect(new Set(ranBy.map((who) => who.split(" ")[0]))).toEqual(new Set(["owner", "helper"]));
  });

  it("rolls segments at their size and removes the sealed ones whose jobs are done", async () => {
    const queue = await openQueue({ walSegmentBytes: 1024 });
    const ran: string[] = [];
    for (let issue = 1; issue <= 8; issue += 1) await queue.enqueue(makeJob(issue, `d-${issue}`));
    expect(segments().length).toBeGreaterThan(2);
    queue.start(async (lease) => {
      ran.push(lease.job.deliveryId);
    });
    await until("all ran", () => ran.length === 8);
    await queue.idle();
    // The next rescans compact: only the newest segment of this log is left.
    await until("sealed segments removed", () => segments().length === 1);
    expect(ran).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((issue) => `d-${issue}`));
  });

  it("refuses an enqueue whose append fails, holding nothing, and appends the next one to a new segment", async () => {
    // Every batch fills its segment: each enqueue opens the next one.
    const queue = await openQueue({ walSegmentBytes: 1 });
    expect((await queue.enqueue(makeJob(1, "d-1"))).accepted).toBe(true);
    const [first] = segments();
    const blocker = join(dir, "wal", (first ?? "").replace(".000001.log", ".000002.log"));
    mkdirSync(blocker);
    await expect(queue.enqueue(makeJob(2, "d-2"))).rejects.toMatchObject({ code: "EEXIST" });
    expect(await queue.isActive("acme/widgets#2")).toBe(false);
    rmdirSync(blocker);
    expect((await queue.enqueue(makeJob(2, "d-2"))).accepted).toBe(true);
    expect(segments().map((name) => name.slice(-10))).toEqual(["000001.log", "000003.log"]);
    await queue.close();
    open.splice(0);
    expect(jobFiles()).toHaveLength(2);
    expect(walFiles()).toEqual([]);
  });

  it("loses no answered enqueue when its process is killed with SIGKILL mid-write", async () => {
    const answered = join(dir, "answered.txt");
    appendFileSync(answered, "");
    let pid = 0;
    const done: Promise<ExecResult> = exec([process.execPath, "--import", "tsx", CHILD, dir, answered], {
      cwd: process.cwd(),
      timeoutMs: 240_000,
      onSpawn: (childPid) => {
        pid = childPid;
      },
    });
    await until("a few hundred answered", () => readFileSync(answered, "utf8").split("\n").length > 300, 200_000);
    process.kill(pid, "SIGKILL");
    expect((await done).signal).toBe("SIGKILL");
    const lines = readFileSync(answered, "utf8")
      .split("\n")
      .filter((line) => line !== "");
    const queue = await openQueue();
    const views = await queue.snapshot();
    const byId = new Map(views.map((view) => [view.jobId, view.job.deliveryId]));
    // Every answered enqueue is there (a job past the last answer may be too: written, not yet answered).
    for (const line of lines) {
      const [jobId, delivery] = line.split(" ");
      expect([jobId, byId.get(jobId ?? "")]).toEqual([jobId, delivery]);
    }
    expect(new Set(views.map((view) => view.job.deliveryId)).size).toBe(views.length);
    // A redelivery of an answered delivery is refused.
    const last = lines.at(-1)?.split(" ")[1] ?? "";
    expect(await queue.enqueue(makeJob(Number(last.slice("child-".length)), last))).toEqual({ accepted: false, reason: "duplicate-delivery" });
    expect(existsSync(join(dir, "wal"))).toBe(true);
  });
});
