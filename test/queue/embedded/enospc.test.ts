import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exec } from "../../../src/exec/index.js";
import { EmbeddedQueue, type JobLease, type StoryJob } from "../../../src/queue/index.js";
import { makeJob, tempDir } from "../helpers.js";
import { until } from "../../support/poll.js";

/**
 * A full disk, for real: a small tmpfs mounted as the data directory. Mounting needs root (as
 * this suite runs in CI); elsewhere the test fails saying so rather than passing untested.
 */
const isRoot = process.getuid?.() === 0;

async function run(argv: string[]): Promise<void> {
  const result = await exec(argv, { cwd: "/", timeoutMs: 30_000 });
  if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} failed (exit ${result.exitCode}): ${result.tail}`);
}

/** Writes files until the file system refuses with ENOSPC. */
function fill(dir: string): void {
  for (let n = 0; ; n += 1) {
    try {
      writeFileSync(join(dir, `filler-${n}`), Buffer.alloc(n === 0 ? 4 << 20 : 4096, 1));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOSPC") {
        if (n > 0) return;
        continue;
      }
      throw error;
    }
  }
}

describe("EmbeddedQueue on a full disk", () => {
  it("releases what a failed write took, tells the story once, and runs the job when space returns", async () => {
    if (!isRoot) {
      throw new Error("this test mounts a small tmpfs as HARNESS_HOME to fill the disk, which needs root: run the suite as root (CI does)");
    }
    const { dir: mount, remove } = await tempDir("harness-enospc-");
    await run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", mount]);
    const queueDir = join(mount, "queue");
    const errors: string[] = [];
    const told: Array<{ job: StoryJob; code: string | undefined }> = [];
    let queue: EmbeddedQueue | undefined;
    try {
      queue = await EmbeddedQueue.open({
        dir: queueDir,
        rescanMs: 50,
        log: { error: (message) => errors.push(message) },
        onWriteFailure: (job, error) => told.push({ job, code: (error as NodeJS.ErrnoException).code }),
      });
      expect((await queue.enqueue(makeJob(1, "d-1"))).accepted).toBe(true);
      fill(mount);

      // A webhook while the disk is full is refused (GitHub gets an error and may redeliver), and holds nothing.
      await expect(queue.enqueue(makeJob(2, "d-2"))).rejects.toMatchObject({ code: "ENOSPC" });
      expect(await queue.isActive("acme/widgets#2")).toBe(false);

      const leases: JobLease[] = [];
      queue.start(async (lease) => {
        leases.push(lease);
      });
      await until("the story was told of the failed write", () => told.length > 0);
      // Several rescans fail the same way; the story is told once.
      await until("a few more attempts", () => errors.filter((line) => line.includes("claiming job") && line.includes("ENOSPC")).length >= 3);
      expect(told).toEqual([{ job: expect.objectContaining({ storyKey: "acme/widgets#1" }), code: "ENOSPC" }]);
      expect(leases).toEqual([]);
      // Between passes (a pass in flight may hold a temp file of its own attempt at this moment).
      await queue.idle();
      expect(readdirSync(join(queueDir, "locks"))).toEqual([]);
      expect(readdirSync(join(queueDir, "jobs")).filter((name) => !name.endsWith(".json"))).toEqual([]);

      for (const name of readdirSync(mount).filter((entry) => entry.startsWith("filler-"))) rmSync(join(mount, name));
      await until("the job ran once space returned", () => leases.length === 1);
      expect(leases[0]).toMatchObject({ interruptions: 0, job: { storyKey: "acme/widgets#1" } });
      await queue.idle();
      expect(readdirSync(join(queueDir, "jobs"))).toEqual([]);
      expect(readdirSync(join(queueDir, "locks"))).toEqual([]);
      // The refused webhook's redelivery is accepted now.
      expect((await queue.enqueue(makeJob(2, "d-2"))).accepted).toBe(true);
    } finally {
      await queue?.close({ abortRunning: true });
      await run(["umount", "-l", mount]);
      await remove();
    }
  });
});
