import { jest } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { exec, type ExecResult } from "../../../src/exec/index.js";
import { EmbeddedQueue, type JobLease } from "../../../src/queue/index.js";
import { makeJob, tempDir } from "../helpers.js";
import { until } from "../../support/poll.js";

const CHILD = resolve("test/queue/queue-child.ts");

// Hang guards for tests with child processes, generous for a loaded machine; the tests poll.
jest.setTimeout(300_000);

/** Starts a second App process on the queue folder; returns its pid and its end. */
async function startChild(dir: string): Promise<{ pid: number; done: Promise<ExecResult> }> {
  let pid = 0;
  const done = exec([process.execPath, "--import", "tsx", CHILD, JSON.stringify({ kind: "embedded", dir, concurrency: 1 }), dir], {
    cwd: process.cwd(),
    timeoutMs: 300_000,
    onSpawn: (childPid) => {
      pid = childPid;
    },
  });
  await until("child spawned", () => pid !== 0);
  return { pid, done };
}

function startedMarkers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith("started-"));
}

describe("EmbeddedQueue across processes", () => {
  it("never runs a job another live process holds, and resumes it after that process is killed with SIGKILL", async () => {
    const { dir, remove } = await tempDir("harness-queue-restart-");
    const queue = await EmbeddedQueue.open({ dir, rescanMs: 50 });
    try {
      await queue.enqueue(makeJob(3, "d-3"));
      const child = await startChild(dir);
      await until("child took the job", () => startedMarkers(dir).length === 1);
      const marker = startedMarkers(dir)[0] ?? "";
      const jobId = marker.slice("started-".length);
      expect(JSON.parse(readFileSync(join(dir, marker), "utf8"))).toEqual({ pid: child.pid, interruptions: 0 });
      expect((await queue.holder(jobId))?.pid).toBe(child.pid);

      const leases: JobLease[] = [];
      queue.start(async (lease) => {
        leases.push(lease);
      });
      await queue.rescan();
      await queue.idle();
      expect(leases).toEqual([]);
      expect(await queue.isActive("acme/widgets#3")).toBe(true);

      process.kill(child.pid, "SIGKILL");
      const ended = await child.done;
      expect(ended.signal).toBe("SIGKILL");
      await until("job resumed here", () => leases.length === 1);
      expect(leases[0]).toMatchObject({ jobId, interruptions: 1, job: { deliveryId: "d-3" } });
      await queue.idle();
      expect(await queue.isActive("acme/widgets#3")).toBe(false);
    } finally {
      await queue.close({ abortRunning: true });
      await remove();
    }
  });

  it("runs each queued job in exactly one of two processes sharing the folder", async () => {
    const { dir, remove } = await tempDir("harness-queue-shared-");
    const queue = await EmbeddedQueue.open({ dir, rescanMs: 50 });
    const child = await startChild(dir);
    try {
      const ids: string[] = [];
      for (let issue = 10; issue < 15; issue += 1) {
        const outcome = await queue.enqueue(makeJob(issue, `d-${issue}`));
        if (outcome.accepted) ids.push(outcome.jobId);
      }
      const leases: JobLease[] = [];
      queue.start(async (lease) => {
        leases.push(lease);
      });
      // The child keeps the one job it takes; this process runs the others.
      await until("all jobs taken", () => leases.length + startedMarkers(dir).length >= ids.length);
      await queue.idle();
      const here = leases.map((lease) => lease.jobId);
      const there = startedMarkers(dir).map((name) => name.slice("started-".length));
      expect(there.length).toBeLessThanOrEqual(1);
      expect([...here, ...there].sort()).toEqual([...ids].sort());
    } finally {
      process.kill(child.pid, "SIGKILL");
      await child.done;
      await queue.close({ abortRunning: true });
      await remove();
    }
  });
});
