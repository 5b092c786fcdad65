/**
 * The job store on its own: ids, the folder it makes, how each write reaches the disk (seen
 * through src/files' recording seam: every call still reaches the real disk), and what a read
 * answers for a job that is gone, torn, not JSON, not a job, or not a file.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { exec } from "../../../src/exec/index.js";
import { flushPendingWrites, useFileSystem } from "../../../src/files/atomic-file.js";
import type { AtomicFileSystem } from "../../../src/files/file-system.js";
import { JobStore, newJobId, UnreadableJobError, type JobRecord } from "../../../src/queue/job-store.js";
import { recordingFileSystem, type RecordingFileSystem } from "../../support/recording-fs.js";
import { makeJob, tempDir } from "../helpers.js";

/** A well-formed job id, the n-th. */
const idOf = (n: number): string => `${String(1_700_000_000_000 + n).padStart(15, "0")}-${String(n).padStart(6, "0")}-0000beef`;
const recordOf = (id: string, issue = 1): JobRecord => ({
  id,
  job: { ...makeJob(issue, `d-${id}`), enqueuedAt: "2026-12-01T00:00:00.000Z" },
  state: "queued",
  interruptions: 0,
});

describe("newJobId", () => {
  it("is the time in 15 digits, a 6-digit counter and this process's part, so ids of one millisecond sort in call order", () => {
    const ids = [newJobId(1_700_000_000_000), newJobId(1_700_000_000_000), newJobId(1_700_000_000_000)];
    for (const id of ids) expect(id).toMatch(/^001700000000000-\d{6}-[0-9a-f]{8}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids.map((id) => id.slice(-8))).size).toBe(1);
    const counters = ids.map((id) => Number(id.split("-")[1]));
    expect(counters[1]).toBe((counters[0] ?? 0) + 1);
    expect(newJobId()).toMatch(new RegExp(`^00\\d{13}-\\d{6}-${ids[0]?.slice(-8) ?? ""}$`));
  });

  it("wraps its counter after a million ids, staying six digits", () => {
    const first = Number(newJobId(5).split("-")[1]);
    let last = "";
    for (let n = 0; n < 1_000_000; n += 1) last = newJobId(5);
    expect(last).toMatch(/^000000000000005-\d{6}-[0-9a-f]{8}$/);
    expect(Number(last.split("-")[1])).toBe(first);
  });
});

describe("JobStore", () => {
  const [j1, j2] = [idOf(1), idOf(2)];
  let dir: string;
  let remove: () => Promise<void>;
  let previous: AtomicFileSystem | undefined;
  const stores: JobStore[] = [];
  beforeEach(async () => {
    ({ dir, remove } = await tempDir("harness-job-store-"));
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await flushPendingWrites();
    if (previous) useFileSystem(previous);
    previous = undefined;
    await remove();
  });
  async function opened(queueDir = join(dir, "queue")): Promise<JobStore> {
    const store = new JobStore(queueDir);
    stores.push(store);
    await store.init();
    return store;
  }
  function record(base: string): RecordingFileSystem {
    const recorder = recordingFileSystem(base);
    previous = useFileSystem(recorder.fs);
    return recorder;
  }

  it("makes its folders where none exist yet, and opens again on them", async () => {
    const store = await opened(join(dir, "home", "queue"));
    expect(readdirSync(join(dir, "home", "queue")).sort()).toEqual(["jobs", "locks"]);
    expect(store.lockPath(j1)).toBe(join(dir, "home", "queue", "locks", `${j1}.lock`));
    await opened(join(dir, "home", "queue"));
    await store.init();
    expect(readdirSync(join(dir, "home", "queue")).sort()).toEqual(["jobs", "locks"]);
  });

  it("writes a job durably by default, and leaves a background write to its thread", async () => {
    const store = await opened();
    const recorder = record(store.jobsDir);
    await store.write(recordOf(j1));
    recorder.mark("returned");
    expect(recorder.events).toEqual([
      `open ${j1}.json.tmp wx`,
      `write ${j1}.json.tmp`,
      `fsync ${j1}.json.tmp`,
      `close ${j1}.json.tmp`,
      `rename ${j1}.json.tmp ${j1}.json`,
      "open . r",
      "fsync .",
      "close .",
      "returned",
    ]);
    await store.write(recordOf(j2), "background");
    expect(recorder.events.slice(9)).toEqual([]);
    expect(readFileSync(join(store.jobsDir, `${j2}.json`), "utf8")).toBe(`${JSON.stringify(recordOf(j2))}\n`);
    expect(await store.read(j1)).toEqual(recordOf(j1));
  });

  it("writes in the background without a thread when it has none (not opened, or closed)", async () => {
    const store = new JobStore(join(dir, "queue"));
    mkdirSync(store.jobsDir, { recursive: true });
    const recorder = record(store.jobsDir);
    // Through src/files, in the background: answered after the rename, before any fsync.
    const backgroundWrite = [`open ${j1}.json.tmp wx`, `write ${j1}.json.tmp`, `close ${j1}.json.tmp`, `rename ${j1}.json.tmp ${j1}.json`, "returned"];
    await store.write(recordOf(j1), "background");
    recorder.mark("returned");
    expect(recorder.events).toEqual(backgroundWrite);
    expect(await store.read(j1)).toEqual(recordOf(j1));
    expect(await store.readMany([j1, "j-gone"])).toEqual(
      new Map([
        [j1, recordOf(j1)],
        ["j-gone", undefined],
      ]),
    );
    await flushPendingWrites();
    // Closed, its thread is gone: the same write goes through src/files again.
    const closed = await opened();
    await closed.close();
    await closed.close();
    recorder.events.splice(0);
    await closed.write(recordOf(j1), "background");
    recorder.mark("returned");
    expect(recorder.events).toEqual(backgroundWrite);
    expect(await closed.read(j1)).toEqual(recordOf(j1));
  });

  it("reads many jobs in chunks, a few chunks ahead, each file once", async () => {
    const store = await opened();
    const ids = Array.from({ length: 1_600 }, (_, n) => idOf(n));
    // The 1,551st is a FIFO, in the fourth chunk of 500: it is read exactly once, when the test feeds it.
    const fifoAt = 1_550;
    for (const [n, id] of ids.entries()) if (n !== fifoAt) writeFileSync(join(store.jobsDir, `${id}.json`), JSON.stringify(recordOf(id, n + 1)));
    const fifo = join(store.jobsDir, `${ids[fifoAt] ?? ""}.json`);
    expect((await exec(["mkfifo", fifo], { cwd: dir })).exitCode).toBe(0);
    const reading = store.readMany(ids);
    const writer = await open(fifo, "w");
    await writer.writeFile(JSON.stringify(recordOf(ids[fifoAt] ?? "", fifoAt + 1)));
    await writer.close();
    const read = await reading;
    expect([...read.keys()]).toEqual(ids);
    expect([...read.values()].map((job) => (job as JobRecord).job.issue.number)).toEqual(ids.map((_, n) => n + 1));
  });

  it("refuses to write a record that is not a job, naming its file", async () => {
    const store = await opened();
    await expect(store.write({ ...recordOf(j1), state: "done" as "queued" })).rejects.toThrow(new RegExp(`queue/jobs/${j1}\\.json`));
    expect(readdirSync(store.jobsDir)).toEqual([]);
  });

  it("reads a job that is gone as undefined, and one that is torn, empty, not JSON or not a job as unreadable, saying why", async () => {
    const store = await opened();
    expect(await store.read("j-gone")).toBeUndefined();
    const files: Record<string, string> = {
      "j-empty": " \n",
      "j-torn": '{"id":"j-to',
      "j-invalid": JSON.stringify({ ...recordOf(idOf(3)), state: "done", interruptions: "two" }),
    };
    for (const [id, text] of Object.entries(files)) writeFileSync(join(store.jobsDir, `${id}.json`), text);
    const reasons: Record<string, string> = {};
    for (const id of Object.keys(files)) {
      const error = await store.read(id).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(UnreadableJobError);
      expect(error).toMatchObject({ name: "UnreadableJobError", jobId: id });
      reasons[id] = (error as UnreadableJobError).reason;
      expect((error as Error).message).toBe(`unreadable job file ${reasons[id] ?? ""}`);
    }
    const notJson = await store.read("j-torn").catch((error: Error) => error);
    expect(reasons["j-empty"]).toBe("queue/jobs/j-empty.json: empty");
    expect(reasons["j-torn"]).toBe(`queue/jobs/j-torn.json: not JSON (${jsonError('{"id":"j-to')})`);
    expect(notJson).toBeInstanceOf(UnreadableJobError);
    expect(reasons["j-invalid"]).toBe('queue/jobs/j-invalid.json: $.state: must be one of "queued", "running"; $.interruptions: must be integer');
    // The same answers from the bulk read.
    const many = await store.readMany(["j-gone", ...Object.keys(files)]);
    expect([...many.keys()]).toEqual(["j-gone", "j-empty", "j-torn", "j-invalid"]);
    expect(many.get("j-gone")).toBeUndefined();
    expect([...many.values()].slice(1).map((value) => (value as UnreadableJobError).reason)).toEqual(Object.keys(files).map((id) => reasons[id]));
  });

  it("fails a read of a job file that is not a file, instead of taking the job as gone", async () => {
    const store = await opened();
    await store.write(recordOf(j1));
    mkdirSync(join(store.jobsDir, `${j2}.json`));
    await expect(store.read(j2)).rejects.toMatchObject({ code: "EISDIR" });
    const bulk = await store.readMany([j1, j2]).catch((error: NodeJS.ErrnoException) => error);
    expect(bulk).toMatchObject({ code: "EISDIR", message: expect.stringMatching(new RegExp(`^reading queue/jobs/${j2}\\.json: EISDIR`)) });
    const unopened = new JobStore(store.queueDir);
    await expect(unopened.readMany([j1, j2])).rejects.toMatchObject({
      code: "EISDIR",
      message: expect.stringMatching(new RegExp(`^reading queue/jobs/${j2}\\.json: EISDIR`)),
    });
  });

  it("lists the ids of its job files oldest first, skipping temp and hidden files, and lists only readable jobs", async () => {
    const store = await opened();
    const ids = Array.from({ length: 12 }, (_, n) => idOf(n));
    // Written out of order: the folder's own order is not the ids'.
    for (const n of [7, 2, 11, 0, 9, 4, 1, 10, 5, 3, 8, 6])
      writeFileSync(join(store.jobsDir, `${ids[n] ?? ""}.json`), `${JSON.stringify(recordOf(ids[n] ?? "", n + 1))}\n`);
    writeFileSync(join(store.jobsDir, `${ids[3] ?? ""}.json.${process.pid}.0badcafe.tmp`), "{");
    writeFileSync(join(store.jobsDir, ".000099.json"), "{");
    writeFileSync(join(store.jobsDir, "notes.txt"), "");
    expect(await store.ids()).toEqual(ids);
    writeFileSync(join(store.jobsDir, `${ids[5] ?? ""}.json`), "");
    expect((await store.list()).map((job) => job.id)).toEqual(ids.filter((id) => id !== ids[5]));
  });

  it("removes a job durably, and a job already gone without complaint; quarantines an unreadable one", async () => {
    const store = await opened();
    await store.write(recordOf(j1));
    writeFileSync(join(store.jobsDir, `${j2}.json`), "{");
    const recorder = record(store.jobsDir);
    await store.remove(j1);
    recorder.mark("returned");
    await store.remove("j-gone");
    expect(recorder.events).toEqual(["open . r", "fsync .", "close .", "returned", "open . r", "fsync .", "close ."]);
    expect(await store.quarantine(j2, "torn")).toEqual({ file: `${j2}.json`, reason: "torn" });
    expect(readdirSync(store.jobsDir)).toEqual([]);
    expect(readdirSync(join(store.queueDir, "quarantine"))).toEqual([`${j2}.json`]);
  });
});

function jsonError(text: string): string {
  try {
    JSON.parse(text);
    return "";
  } catch (error) {
    return (error as Error).message;
  }
}
