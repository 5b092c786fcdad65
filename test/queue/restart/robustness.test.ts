import { jest } from "@jest/globals";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { exec, identityOf, type ExecResult } from "../../../src/exec/index.js";
import { claimHarnessHome, EmbeddedQueue, HarnessHomeInUseError, type JobLease, type QuarantinedJob } from "../../../src/queue/index.js";
import { makeJob, tempDir } from "../helpers.js";
import { until } from "../../support/poll.js";

const HOME_CHILD = resolve("test/queue/home/home-child.ts");

// Hang guards for tests with child processes, generous for a loaded machine; the tests poll.
jest.setTimeout(300_000);

/** A job file as the queue writes it, for a test that plants one. */
function jobFile(id: string, issue: number, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ id, job: makeJob(issue, `planted-${issue}`), state: "queued", interruptions: 0, ...extra })}\n`;
}

const idFor = (n: number): string => `${String(1_700_000_000_000 + n).padStart(15, "0")}-${String(n).padStart(6, "0")}-0000000${n}`;

describe("EmbeddedQueue never wedges", () => {
  let dir: string;
  let remove: () => Promise<void>;
  const open: EmbeddedQueue[] = [];
  const errors: string[] = [];

  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-queue-robust-"));
    errors.length = 0;
  });
  afterEach(async () => {
    for (const queue of open.splice(0)) await queue.close({ abortRunning: true });
    await remove();
  });

  async function openQueue(extra: { onQuarantine?: (q: QuarantinedJob) => void } = {}): Promise<EmbeddedQueue> {
    const queue = await EmbeddedQueue.open({ dir, rescanMs: 50, log: { error: (message) => errors.push(message) }, ...extra });
    open.push(queue);
    return queue;
  }

  function plant(id: string, text: string, lock?: string): void {
    writeFileSync(join(dir, "jobs", `${id}.json`), text);
    if (lock !== undefined) writeFileSync(join(dir, "locks", `${id}.lock`), lock);
  }

  it("runs a job whose lock file is empty or torn (a crash's leftover), instead of treating it as held", async () => {
    await (await openQueue()).close();
    open.length = 0;
    plant(idFor(1), jobFile(idFor(1), 1, { state: "running" }), "");
    plant(idFor(2), jobFile(idFor(2), 2, { state: "running" }), '{"pid":-1,"startTime":"x","instance":"a","at":"2026-');
    plant(idFor(3), jobFile(idFor(3), 3), '{"pid":-1,"startTime":"x","instance":"a","at":"2026-11-29T19:36:42.121Z"}');
    const queue = await openQueue();
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
    });
    await until("all three jobs ran", () => leases.length === 3);
    expect(leases.map((lease) => [lease.job.issue.number, lease.interruptions]).sort()).toEqual([
      [1, 1],
      [2, 1],
      [3, 0],
    ]);
    await queue.idle();
    expect(readdirSync(join(dir, "locks"))).toEqual([]);
  });

  it("takes over a lock whose pid is alive but belongs to a later process (start time differs)", async () => {
    await (await openQueue()).close();
    open.length = 0;
    const init = identityOf(1);
    expect(init).toBeDefined();
    // Pid 1 is always alive; the recorded start time is not its own, so the holder is a dead process whose pid was reused.
    plant(
      idFor(4),
      jobFile(idFor(4), 4, { state: "running" }),
      JSON.stringify({ pid: 1, startTime: `${init?.startTime ?? ""}9`, instance: "old", at: new Date().toISOString() }),
    );
    const queue = await openQueue();
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
    });
    await until("the job ran", () => leases.length === 1);
    expect(leases[0]?.interruptions).toBe(1);
  });

  it("leaves a job alone while the live process that holds its lock runs, and takes it when that process is gone", async () => {
    await (await openQueue()).close();
    open.length = 0;
    let pid = 0;
    const sleeper = exec(["sleep", "60"], { cwd: dir, onSpawn: (childPid) => (pid = childPid), timeoutMs: 120_000 });
    await until("sleep started", () => pid !== 0 && identityOf(pid) !== undefined);
    const holder = identityOf(pid);
    plant(idFor(5), jobFile(idFor(5), 5, { state: "running" }), JSON.stringify({ ...holder, instance: "other", at: new Date().toISOString() }));
    const queue = await openQueue();
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
    });
    await queue.rescan();
    await queue.idle();
    expect(leases).toEqual([]);
    expect((await queue.holder(idFor(5)))?.pid).toBe(pid);
    process.kill(pid, "SIGKILL");
    await sleeper;
    await until("the job ran once its holder died", () => leases.length === 1);
  });

  it("moves an unreadable job file to queue/quarantine/, logs its name, tells the story it names, and runs the others", async () => {
    await (await openQueue()).close();
    open.length = 0;
    const unknownKind = jobFile(idFor(6), 6).replace('"kind":"start"', '"kind":"resurrect"');
    plant(idFor(6), unknownKind);
    plant(idFor(7), jobFile(idFor(7), 7).slice(0, 40));
    plant(idFor(8), "");
    plant(idFor(9), jobFile(idFor(9), 9));
    const told: QuarantinedJob[] = [];
    const queue = await openQueue({ onQuarantine: (quarantined) => told.push(quarantined) });
    const leases: JobLease[] = [];
    queue.start(async (lease) => {
      leases.push(lease);
    });
    await until("the readable job ran", () => leases.length === 1);
    await queue.idle();
    expect(leases[0]?.job.issue.number).toBe(9);
    expect(readdirSync(join(dir, "quarantine")).sort()).toEqual([`${idFor(6)}.json`, `${idFor(7)}.json`, `${idFor(8)}.json`]);
    expect(readFileSync(join(dir, "quarantine", `${idFor(6)}.json`), "utf8")).toBe(unknownKind);
    expect(readdirSync(join(dir, "jobs"))).toEqual([]);
    expect(told.map((entry) => entry.file).sort()).toEqual([`${idFor(6)}.json`, `${idFor(7)}.json`, `${idFor(8)}.json`]);
    const kind = told.find((entry) => entry.file === `${idFor(6)}.json`);
    expect(kind?.story).toEqual({ installationId: 1, owner: "acme", repo: "widgets", issueNumber: 6 });
    expect(kind?.reason).toMatch(/\$\.job\.kind/);
    expect(told.find((entry) => entry.file === `${idFor(7)}.json`)?.story).toBeUndefined();
    expect(told.find((entry) => entry.file === `${idFor(8)}.json`)?.reason).toMatch(/empty/);
    for (const id of [6, 7, 8]) expect(errors.some((line) => line.includes(`queue/quarantine/${idFor(id)}.json`))).toBe(true);
    // The quarantined story can be labelled again: nothing holds it active.
    expect(await queue.isActive("acme/widgets#6")).toBe(false);
  });
});

describe("one App per HARNESS_HOME", () => {
  it("refuses a second process on the data directory, naming the holder, and allows it once the holder is killed with SIGKILL", async () => {
    const { dir: home, remove } = await tempDir("harness-home-");
    let pid = 0;
    let done: Promise<ExecResult> | undefined;
    try {
      done = exec([process.execPath, "--import", "tsx", HOME_CHILD, home], { cwd: process.cwd(), timeoutMs: 300_000, onSpawn: (childPid) => (pid = childPid) });
      await until("the other process claimed the folder", () => pid !== 0 && existsSync(join(home, `claimed-${pid}`)));
      const refused = await claimHarnessHome(home).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(HarnessHomeInUseError);
      expect((refused as Error).message).toContain(`pid ${pid}`);
      expect((refused as Error).message).toContain("one App per data directory");
      process.kill(pid, "SIGKILL");
      expect((await done).signal).toBe("SIGKILL");
      const claim = await claimHarnessHome(home);
      await expect(claimHarnessHome(home)).rejects.toBeInstanceOf(HarnessHomeInUseError);
      await claim.release();
      await (await claimHarnessHome(home)).release();
    } finally {
      if (pid !== 0 && identityOf(pid)) process.kill(pid, "SIGKILL");
      await done;
      await remove();
    }
  });
});
