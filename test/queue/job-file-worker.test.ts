import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { exec } from "../../src/exec/index.js";
import { JobFileWorker } from "../../src/queue/job-file-worker.js";
import { appearedOnlyByRename, folderEvents, writtenNames } from "../support/fs-events.js";
import { tempDir } from "./helpers.js";

describe("JobFileWorker", () => {
  let dir: string;
  let remove: () => Promise<void>;
  let worker: JobFileWorker;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-job-worker-"));
    worker = JobFileWorker.start();
  });
  afterEach(async () => {
    await worker.close();
    await remove();
  });

  it("writes through a temp file and a rename, visible when the write resolves, and flushes on request", async () => {
    const path = join(dir, "job.json");
    const events = await folderEvents(dir, () => worker.write(path, '{"v":1}\n'));
    expect(readFileSync(path, "utf8")).toBe('{"v":1}\n');
    expect(appearedOnlyByRename(events, "job.json")).toBe(true);
    expect(writtenNames(events)).toEqual([expect.stringMatching(new RegExp(`^job\\.json\\.${process.pid}\\.[0-9a-f]{8}\\.tmp$`))]);
    await expect(worker.flush()).resolves.toBeUndefined();
    expect(readdirSync(dir)).toEqual(["job.json"]);
  });

  it("rejects with the file system's code and leaves no temp file", async () => {
    await expect(worker.write(join(dir, "missing", "job.json"), "{}\n")).rejects.toMatchObject({ code: "ENOENT" });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("answers each write of one turn on its own: a failed write rejects only itself", async () => {
    const results = await Promise.allSettled([
      worker.write(join(dir, "a.json"), "{}\n"),
      worker.write(join(dir, "missing", "b.json"), "{}\n"),
      worker.write(join(dir, "c.json"), "{}\n"),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(results[1]).toMatchObject({ reason: { code: "ENOENT" } });
    expect(readdirSync(dir).sort()).toEqual(["a.json", "c.json"]);
  });

  it("flushes the writes asked in the same turn, not only the ones sent before it", async () => {
    let written = false;
    const write = worker.write(join(dir, "same-turn.json"), "{}\n").then(() => {
      written = true;
    });
    await worker.flush();
    expect(written).toBe(true);
    await write;
  });

  it("refuses writes once closed", async () => {
    await worker.close();
    await expect(worker.write(join(dir, "late.json"), "{}\n")).rejects.toThrow(/closed/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("JobFileWorker in a process of its own", () => {
  it("keeps the process up while a write waits for its answer, and lets it end once idle", async () => {
    const { dir, remove } = await tempDir("harness-job-worker-life-");
    try {
      const path = join(dir, "job.json");
      // A hang guard, not a budget: the child ends by itself in well under a second on an idle machine.
      const result = await exec([process.execPath, "--import", "tsx", resolve("test/queue/writer-child.ts"), path], { cwd: process.cwd(), timeoutMs: 120_000, captureStdout: true });
      expect([result.exitCode, result.stdout?.toString()]).toEqual([0, "written\n"]);
      expect(readFileSync(path, "utf8")).toBe("{}\n");
    } finally {
      await remove();
    }
  }, 180_000);
});
