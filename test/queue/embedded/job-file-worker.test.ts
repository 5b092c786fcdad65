import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { exec } from "../../../src/exec/index.js";
import { JobFileWorker } from "../../../src/queue/job-file-worker.js";
import { appearedOnlyByRename, folderEvents, writtenNames } from "../../support/fs-events.js";
import { tempDir } from "../helpers.js";
import { until } from "../../support/poll.js";

/** A stand-in thread that exits, throws or refuses on request (see its comment). */
const FAILING_THREAD = pathToFileURL(resolve("test/fixtures/queue/failing-job-thread.mjs"));

/** Message ports keeping this process alive: a worker thread that is ref'd counts as one. */
function keepingAlive(): number {
  return process.getActiveResourcesInfo().filter((type) => type === "MessagePort").length;
}

/** This process's threads (Linux). */
function threads(): number {
  return readdirSync("/proc/self/task").length;
}

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
    // A later turn's write goes in a batch of its own, without a flush to send it.
    await worker.write(join(dir, "d.json"), "{}\n");
    expect(readdirSync(dir).sort()).toEqual(["a.json", "c.json", "d.json"]);
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

  it("reads files in order, each as its text or its error's code", async () => {
    writeFileSync(join(dir, "a.json"), "a\n");
    mkdirSync(join(dir, "folder.json"));
    const files = await worker.read([join(dir, "gone.json"), join(dir, "a.json"), join(dir, "folder.json")]);
    expect(files).toEqual([
      { code: "ENOENT", message: expect.stringContaining("gone.json") },
      { text: "a\n" },
      { code: "EISDIR", message: expect.stringContaining("EISDIR") },
    ]);
  });

  it("keeps the process up only while an answer is awaited, idle or not yet answered", async () => {
    const before = keepingAlive();
    const idle = JobFileWorker.start();
    try {
      expect(keepingAlive()).toBe(before);
    } finally {
      await idle.close();
    }
    const fifo = join(dir, "fifo.json");
    expect((await exec(["mkfifo", fifo], { cwd: dir })).exitCode).toBe(0);
    writeFileSync(join(dir, "a.json"), "a\n");
    const first = worker.read([join(dir, "a.json")]);
    // The thread answers the first read, then waits in the second until the test writes the FIFO.
    const second = worker.read([fifo]);
    expect(keepingAlive()).toBe(before + 1);
    await expect(first).resolves.toEqual([{ text: "a\n" }]);
    expect(keepingAlive()).toBe(before + 1);
    await writeFile(fifo, "b\n");
    await expect(second).resolves.toEqual([{ text: "b\n" }]);
    expect(keepingAlive()).toBe(before);
  });

  it("stops its thread on close, after sending the writes of the same turn", async () => {
    const before = threads();
    const other = JobFileWorker.start();
    expect(threads()).toBe(before + 1);
    const write = other.write(join(dir, "last.json"), "{}\n");
    await other.close();
    expect(threads()).toBe(before);
    await expect(write).resolves.toBeUndefined();
    expect(readFileSync(join(dir, "last.json"), "utf8")).toBe("{}\n");
    await expect(other.close()).resolves.toBeUndefined();
  });

  it("refuses writes once closed", async () => {
    await worker.close();
    await expect(worker.write(join(dir, "late.json"), "{}\n")).rejects.toThrow(/closed/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("JobFileWorker with a thread that fails", () => {
  let dir: string;
  let remove: () => Promise<void>;
  let worker: JobFileWorker;
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-job-worker-fails-"));
    worker = JobFileWorker.start({ thread: FAILING_THREAD });
  });
  afterEach(async () => {
    await worker.close();
    await remove();
  });

  it("sends the writes of one turn in one message, and no empty one for a flush", async () => {
    await worker.flush();
    const results = await Promise.allSettled([worker.write(join(dir, "a.json"), "{}\n"), worker.write(join(dir, "b.json"), "{}\n")]);
    expect(await worker.read([])).toEqual([{ text: JSON.stringify(["flush", "write", "read"]) }]);
    // A refusal without a code is told without one.
    expect(results).toEqual([
      { status: "rejected", reason: new Error("refused without a code") },
      { status: "rejected", reason: new Error("refused without a code") },
    ]);
    expect(results.map((result) => result.status === "rejected" && "code" in result.reason)).toEqual([false, false]);
  });

  it("lets go an answer nobody waits for", async () => {
    await expect(worker.write(join(dir, "stray"), "{}\n")).rejects.toThrow("refused without a code");
    expect(await worker.read([])).toEqual([{ text: JSON.stringify(["write", "read"]) }]);
  });

  it("rejects what waits, and everything after, once the thread exited", async () => {
    const write = worker.write(join(dir, "exit"), "{}\n");
    await expect(write).rejects.toThrow(new Error("the job writer thread exited (code 3)"));
    await expect(worker.write(join(dir, "a.json"), "{}\n")).rejects.toThrow(new Error("the job writer thread exited (code 3)"));
    await expect(worker.read([join(dir, "a.json")])).rejects.toThrow(new Error("the job writer thread exited (code 3)"));
    await expect(worker.flush()).rejects.toThrow(new Error("the job writer thread exited (code 3)"));
    expect(readdirSync(dir)).toEqual([]);
  });

  it("rejects with the thread's own error when it throws", async () => {
    const threadsBefore = threads();
    await expect(worker.write(join(dir, "throw"), "{}\n")).rejects.toThrow(new Error("the stand-in thread broke"));
    // The thread ends after its error: the error stays the one told.
    await until("the thread to end", () => threads() < threadsBefore);
    await expect(worker.write(join(dir, "a.json"), "{}\n")).rejects.toThrow(new Error("the stand-in thread broke"));
  });
});

describe("JobFileWorker in a process of its own", () => {
  it("keeps the process up while a write waits for its answer, and lets it end once idle", async () => {
    const { dir, remove } = await tempDir("harness-job-worker-life-");
    try {
      const path = join(dir, "job.json");
      // A hang guard, not a budget: the child ends by itself in well under a second on an idle machine.
      const result = await exec([process.execPath, "--import", "tsx", resolve("test/queue/embedded/writer-child.ts"), path], {
        cwd: process.cwd(),
        timeoutMs: 120_000,
        captureStdout: true,
      });
      expect([result.exitCode, result.stdout?.toString()]).toEqual([0, "written\n"]);
      expect(readFileSync(path, "utf8")).toBe("{}\n");
    } finally {
      await remove();
    }
  }, 180_000);
});
