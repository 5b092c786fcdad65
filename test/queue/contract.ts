/**
 * The queue port's contract: one suite, run against every adapter (embedded and BullMQ). Each
 * test gets a fresh backing store; `open` may be called several times on it to stand for
 * several worker processes. Waits poll with generous deadlines; nothing depends on timing.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { jest } from "@jest/globals";
import { exec, type ExecResult } from "../../src/exec/index.js";
import type { JobLease, QueueConfig, StoryJob, StoryQueue } from "../../src/queue/index.js";
import { deferred, makeJob } from "./helpers.js";
import { until } from "../support/poll.js";

export interface OpenOptions {
  concurrency?: number;
  installationSlots?: number;
  /** Awaited between an enqueue's two writes: a promise that never settles stands for the process dying there. */
  crashPoint?: () => Promise<void>;
}

export interface QueueBacking {
  /** A queue on this backing store, as one more process would open it. */
  open(options?: OpenOptions): Promise<StoryQueue>;
  /** How a child process opens a queue on the same store. */
  childConfig(): QueueConfig;
  dispose(): Promise<void>;
}

/**
 * Hang guards, not budgets: a loaded machine (a child process starting under tsx, two cores
 * shared by several suites) takes many times longer than an idle one, and the tests only poll.
 */
const TAKEOVER_MS = 240_000;
const TEST_GUARD_MS = 300_000;
const CHILD = resolve("test/queue/queue-child.ts");

export function describeQueueContract(adapter: string, makeBacking: () => Promise<QueueBacking>): void {
  describe(`queue contract: ${adapter}`, () => {
    jest.setTimeout(TEST_GUARD_MS);
    let backing: QueueBacking;
    const opened: StoryQueue[] = [];
    const open = async (options?: OpenOptions): Promise<StoryQueue> => {
      const queue = await backing.open(options);
      opened.push(queue);
      return queue;
    };
    const closeOne = async (queue: StoryQueue, abortRunning = false): Promise<void> => {
      opened.splice(opened.indexOf(queue), 1);
      await queue.close({ abortRunning });
    };

    beforeEach(async () => {
      backing = await makeBacking();
    });
    afterEach(async () => {
      for (const queue of opened.splice(0)) await queue.close({ abortRunning: true });
      await backing.dispose();
    });

    it("accepts a job once: a redelivery and a second job of an active story are refused", async () => {
      const queue = await open();
      expect(await queue.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: true, jobId: expect.any(String) });
      expect(await queue.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
      expect(await queue.enqueue(makeJob(1, "d-2"))).toEqual({ accepted: false, reason: "already-active" });
      expect(await queue.isActive("acme/widgets#1")).toBe(true);
      expect(await queue.isActive("acme/widgets#2")).toBe(false);
      // Seen by another process on the same store too.
      const other = await open();
      expect(await other.enqueue(makeJob(1, "d-3"))).toEqual({ accepted: false, reason: "already-active" });
      expect(await other.enqueue(makeJob(1, "d-1"))).toEqual({ accepted: false, reason: "duplicate-delivery" });
      expect((await other.snapshot()).map((view) => [view.job.deliveryId, view.state])).toEqual([["d-1", "queued"]]);
    });

    it("loses no story when the process dies between storing the job and remembering its delivery", async () => {
      let reached = false;
      // The enqueue stops for good between its two writes, as a process killed there would.
      const dying = await open({
        crashPoint: () => {
          reached = true;
          return new Promise<void>(() => undefined);
        },
      });
      const job = { ...makeJob(1, "d-1"), eventKey: "issues.labeled:acme/widgets#1:story:2026-11-29T19:36:42Z:octocat" };
      void dying.enqueue(job);
      await until("the enqueue to reach the point between its writes", () => reached);
      const restarted = await open();
      // GitHub redelivers (no answer came): the story is queued, so the redelivery adds nothing, and nothing was lost
      // (refused as a repeat of the queued job, or as its story being active: either way not accepted twice).
      expect(await restarted.enqueue(job)).toEqual({ accepted: false, reason: expect.stringMatching(/^(already-active|duplicate-delivery)$/) });
      expect((await restarted.snapshot()).map((view) => [view.job.deliveryId, view.state])).toEqual([["d-1", "queued"]]);
      const ran: string[] = [];
      restarted.start(async (lease) => {
        ran.push(lease.job.deliveryId);
      });
      await until("the story to run", () => ran.length === 1);
      await until("story inactive", async () => !(await restarted.isActive("acme/widgets#1")));
      // The redelivery was remembered when it was refused.
      expect(await restarted.enqueue(job)).toEqual({ accepted: false, reason: "duplicate-delivery" });
      expect(ran).toEqual(["d-1"]);
    });

    it("refuses a replay of an event under a new delivery id (its eventKey)", async () => {
      const queue = await open();
      const job = { ...makeJob(1, "d-1"), eventKey: "issues.labeled:acme/widgets#1:story:2026-11-29T19:36:42Z:octocat" };
      expect((await queue.enqueue(job)).accepted).toBe(true);
      const other = await open();
      expect(await other.enqueue({ ...job, deliveryId: "d-replay" })).toEqual({ accepted: false, reason: "duplicate-delivery" });
      expect(await queue.enqueue({ ...makeJob(2, "d-2"), eventKey: "issues.labeled:acme/widgets#2:story:2026-11-29T19:36:43Z:octocat" })).toMatchObject({
        accepted: true,
      });
    });

    it("lets a story be queued again once its job finished", async () => {
      const queue = await open();
      const ran: string[] = [];
      queue.start(async (lease) => {
        ran.push(lease.job.deliveryId);
      });
      await queue.enqueue(makeJob(1, "d-1"));
      await until("first run", () => ran.length === 1);
      await until("story inactive", async () => !(await queue.isActive("acme/widgets#1")));
      expect((await queue.enqueue(makeJob(1, "d-2"))).accepted).toBe(true);
      await until("second run", () => ran.length === 2);
      expect(ran).toEqual(["d-1", "d-2"]);
      await until("queue empty", async () => (await queue.snapshot()).length === 0);
    });

    it("runs at most `concurrency` jobs at once, in enqueue order, and re-admissions first", async () => {
      const queue = await open({ concurrency: 2 });
      const gates = new Map([1, 2, 3, 4].map((issue) => [issue, deferred()]));
      const started: number[] = [];
      let runningNow = 0;
      let most = 0;
      queue.start(async (lease) => {
        runningNow += 1;
        most = Math.max(most, runningNow);
        started.push(lease.job.issue.number);
        await gates.get(lease.job.issue.number)?.promise;
        runningNow -= 1;
      });
      await queue.enqueue(makeJob(1));
      await queue.enqueue(makeJob(2));
      await until("two started", () => started.length === 2);
      await queue.enqueue(makeJob(3));
      await queue.enqueue(makeJob(4, "d-4", { kind: "retry-blocked" }));
      await until("snapshot shows two running, two queued", async () => {
        const views = await queue.snapshot();
        return views.filter((view) => view.state === "running").length === 2 && views.length === 4;
      });
      gates.get(1)?.resolve();
      await until("third started", () => started.length === 3);
      gates.get(2)?.resolve();
      await until("fourth started", () => started.length === 4);
      gates.get(3)?.resolve();
      gates.get(4)?.resolve();
      await queue.idle();
      expect(started.slice(0, 2).sort()).toEqual([1, 2]);
      expect(started.slice(2)).toEqual([4, 3]);
      expect(most).toBe(2);
    });

    it("keeps one installation to HARNESS_INSTALLATION_SLOTS running jobs, while another installation runs", async () => {
      const queue = await open({ concurrency: 3, installationSlots: 1 });
      const release = deferred();
      const running = new Map<number, number>();
      let mostOfOne = 0;
      const started: number[] = [];
      queue.start(async (lease) => {
        const installation = lease.job.installationId;
        running.set(installation, (running.get(installation) ?? 0) + 1);
        if (installation === 1) mostOfOne = Math.max(mostOfOne, running.get(1) ?? 0);
        started.push(lease.job.issue.number);
        await release.promise;
        running.set(installation, (running.get(installation) ?? 1) - 1);
      });
      await queue.enqueue(makeJob(1, "d-1", { installationId: 1 }));
      await queue.enqueue(makeJob(2, "d-2", { installationId: 1 }));
      await queue.enqueue(makeJob(3, "d-3", { installationId: 2 }));
      await until("one job of each installation running", () => started.includes(3) && started.length === 2);
      expect(started.filter((issue) => issue !== 3)).toHaveLength(1);
      release.resolve();
      await until("all three ran", () => started.length === 3);
      await queue.idle();
      expect(mostOfOne).toBe(1);
    });

    it("runs each job in exactly one of two workers, and both work at once", async () => {
      const first = await open();
      const second = await open();
      const release = deferred();
      const ranBy: Array<[string, string]> = [];
      const work =
        (who: string) =>
        async (lease: JobLease): Promise<void> => {
          ranBy.push([lease.job.deliveryId, who]);
          await release.promise;
        };
      first.start(work("first"));
      second.start(work("second"));
      for (const issue of [1, 2]) await first.enqueue(makeJob(issue, `d-${issue}`));
      // Each worker runs one job at a time: two running means both are used.
      await until("both workers busy", () => ranBy.length === 2);
      expect(new Set(ranBy.map(([, who]) => who))).toEqual(new Set(["first", "second"]));
      for (const issue of [3, 4, 5]) await second.enqueue(makeJob(issue, `d-${issue}`));
      release.resolve();
      await until(`all five ran (so far ${JSON.stringify(ranBy)})`, () => ranBy.length === 5);
      await first.idle();
      await second.idle();
      expect(ranBy.map(([delivery]) => delivery).sort()).toEqual(["d-1", "d-2", "d-3", "d-4", "d-5"]);
    });

    it("gives a job stopped by shutdown to the next worker, counting the interruption", async () => {
      const first = await open();
      const entered = deferred();
      first.start(async (_lease, signal) => {
        entered.resolve();
        await new Promise<void>((done) => signal.addEventListener("abort", () => done()));
      });
      await first.enqueue(makeJob(5, "d-5"));
      await entered.promise;
      await closeOne(first, true);
      const second = await open();
      const leases: JobLease[] = [];
      second.start(async (lease) => {
        leases.push(lease);
      });
      await until("resumed job", () => leases.length === 1);
      expect(leases[0]).toMatchObject({ interruptions: 1, job: { deliveryId: "d-5", issue: { number: 5 } } });
    });

    it("keeps queued jobs and remembered deliveries when every process closes", async () => {
      const first = await open();
      await first.enqueue(makeJob(1, "d-1"));
      await first.enqueue(makeJob(2, "d-2"));
      await closeOne(first);
      const second = await open();
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

    it("batches revise jobs that arrive while the story runs into one next round with both triggers, in arrival order", async () => {
      const queue = await open();
      const release = deferred();
      const leases: JobLease[] = [];
      queue.start(async (lease, signal) => {
        leases.push(lease);
        if (leases.length === 1) await Promise.race([release.promise, new Promise((done) => signal.addEventListener("abort", done))]);
      });
      await queue.enqueue(makeJob(1, "d-start"));
      await until("the first run to start", () => leases.length === 1);
      // Opened once the story is queued, as a second App process would find it.
      const other = await open();
      // Two triggers, through two processes: each is told it was batched.
      expect(await queue.enqueue(reviseJob(1, "review-a", 11))).toEqual({ accepted: true, jobId: "pending:review-a", batched: true });
      expect(await other.enqueue(reviseJob(1, "review-b", 12))).toEqual({ accepted: true, jobId: "pending:review-b", batched: true });
      // A redelivery of a batched trigger is a repeat; a second start is still refused.
      expect(await other.enqueue(reviseJob(1, "review-b", 12))).toEqual({ accepted: false, reason: "duplicate-delivery" });
      expect(await other.enqueue(makeJob(1, "d-again"))).toEqual({ accepted: false, reason: "already-active" });
      release.resolve();
      await until("the batched round to run", () => leases.length === 2);
      await until("story inactive", async () => !(await queue.isActive("acme/widgets#1")));
      expect(leases).toHaveLength(2);
      expect(leases[1]).toMatchObject({ interruptions: 0, job: { kind: "revise", storyKey: "acme/widgets#1" } });
      expect(triggerIds(leases[1]!)).toEqual([11, 12]);
      expect(await queue.snapshot()).toEqual([]);
      // With no run going, a trigger is a round of its own at once.
      expect(await queue.enqueue(reviseJob(1, "review-c", 13))).toEqual({ accepted: true, jobId: expect.not.stringMatching(/^pending:/) });
      expect((await queue.enqueue(reviseJob(1, "review-c", 13))).accepted).toBe(false);
      await until("the third round", () => leases.length === 3);
      expect(triggerIds(leases[2]!)).toEqual([13]);
    });

    it(
      "keeps the triggers batched during a run whose worker is killed with SIGKILL: the run is taken over, then they run as one round",
      async () => {
        const markers = mkdtempSync(join(tmpdir(), "harness-queue-markers-"));
        const queue = await open();
        let child: { pid: number; done: Promise<ExecResult> } | undefined;
        try {
          await queue.enqueue(makeJob(4, "d-4"));
          child = await startChild(backing.childConfig(), markers);
          await until("the child took the job", () => readdirSync(markers).some((name) => name.startsWith("started-")));
          expect(await queue.enqueue(reviseJob(4, "review-x", 41))).toMatchObject({ accepted: true, batched: true });
          expect(await queue.enqueue(reviseJob(4, "review-y", 42))).toMatchObject({ accepted: true, batched: true });
          process.kill(child.pid, "SIGKILL");
          expect((await child.done).signal).toBe("SIGKILL");
          const leases: JobLease[] = [];
          queue.start(async (lease) => {
            leases.push(lease);
          });
          await until("the run taken over, then the batched round", () => leases.length === 2, TAKEOVER_MS);
          expect(leases[0]).toMatchObject({ interruptions: 1, job: { kind: "start", deliveryId: "d-4" } });
          expect(leases[1]).toMatchObject({ interruptions: 0, job: { kind: "revise" } });
          expect(triggerIds(leases[1]!)).toEqual([41, 42]);
          await until("story inactive", async () => !(await queue.isActive("acme/widgets#4")));
        } finally {
          if (child) {
            try {
              process.kill(child.pid, "SIGKILL");
            } catch {
              // Already gone.
            }
            await child.done;
          }
          rmSync(markers, { recursive: true, force: true });
        }
      },
      TAKEOVER_MS + TEST_GUARD_MS,
    );

    it(
      "gives the job of a worker killed with SIGKILL to another worker",
      async () => {
        const markers = mkdtempSync(join(tmpdir(), "harness-queue-markers-"));
        const queue = await open();
        let child: { pid: number; done: Promise<ExecResult> } | undefined;
        try {
          await queue.enqueue(makeJob(3, "d-3"));
          child = await startChild(backing.childConfig(), markers);
          const started = (): string[] => readdirSync(markers).filter((name) => name.startsWith("started-"));
          await until("the child took the job", () => started().length === 1);
          expect(JSON.parse(readFileSync(join(markers, started()[0] ?? ""), "utf8"))).toEqual({ pid: child.pid, interruptions: 0 });
          const leases: JobLease[] = [];
          queue.start(async (lease) => {
            leases.push(lease);
          });
          // While the child lives, its job is its own.
          expect((await queue.snapshot()).map((view) => view.state)).toEqual(["running"]);
          expect(leases).toEqual([]);
          process.kill(child.pid, "SIGKILL");
          expect((await child.done).signal).toBe("SIGKILL");
          await until("the job taken over here", () => leases.length === 1, TAKEOVER_MS);
          expect(leases[0]).toMatchObject({ interruptions: 1, job: { deliveryId: "d-3" } });
          await until("story inactive", async () => !(await queue.isActive("acme/widgets#3")));
        } finally {
          if (child) {
            try {
              process.kill(child.pid, "SIGKILL");
            } catch {
              // Already gone.
            }
            await child.done;
          }
          rmSync(markers, { recursive: true, force: true });
        }
      },
      TAKEOVER_MS + TEST_GUARD_MS,
    );
  });
}

/** A revise job of issue `issue`: one writer's review, `reviewId`. */
function reviseJob(issue: number, deliveryId: string, reviewId: number): StoryJob {
  return {
    ...makeJob(issue, deliveryId, { kind: "revise" }),
    pullNumber: 100 + issue,
    revision: { triggers: [{ kind: "review", by: "writer", id: reviewId, body: `review ${reviewId}`, comments: [] }] },
  };
}

/** The ids of a lease's revision triggers, in order. */
function triggerIds(lease: JobLease): number[] {
  return (lease.job.revision?.triggers ?? []).map((trigger) => (trigger.kind === "ci" ? trigger.suiteId : trigger.id));
}

async function startChild(config: QueueConfig, markers: string): Promise<{ pid: number; done: Promise<ExecResult> }> {
  let pid = 0;
  const done = exec([process.execPath, "--import", "tsx", CHILD, JSON.stringify(config), markers], {
    cwd: process.cwd(),
    timeoutMs: TAKEOVER_MS + TEST_GUARD_MS,
    onSpawn: (childPid) => {
      pid = childPid;
    },
  });
  await until("child spawned", () => pid !== 0);
  return { pid, done };
}
