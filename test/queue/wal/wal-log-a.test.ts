/**
 * The write-ahead log itself (`src/queue/wal/log.ts`), without a queue around it: real files in
 * a temp folder, several logs of this process side by side (each its own owner, as two queues
 * are), dead processes' logs written as they leave them. `hasFile` and `materialise` are a real
 * jobs folder: a job's file is written by `materialise` and looked for by `hasFile`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireLock, newLockOwner, releaseLock, retireLockOwner } from "../../../src/queue/job-lock.js";
import { DEFAULT_SEGMENT_BYTES, WriteAheadLog, decodeChunk, encodeEntry, encodeJobLine, type LoggedJob } from "../../../src/queue/wal/index.js";
import { tempDir } from "../helpers.js";

/** A dead log's name with every end of its character ranges in both halves. */
const DEAD = "AZaz09-09zaZA";

let root = "";
let remove: () => Promise<void> = async () => undefined;
const opened: WriteAheadLog[] = [];
/** Every `materialise` call, by the log that made it (its label: the how-manieth opened in the test). */
let written: { by: string; ids: string[] }[] = [];
let count = 0;
const labels = new Map<WriteAheadLog, string>();
const by = (log: WriteAheadLog): string => labels.get(log) ?? "";

beforeEach(async () => {
  ({ dir: root, remove } = await tempDir("harness-wal-log-a-"));
  mkdirSync(join(root, "jobs"));
  mkdirSync(join(root, "locks"));
  written = [];
  count = 0;
});

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close();
  await remove();
});

const walDir = (): string => join(root, "wal");
const walFiles = (): string[] => readdirSync(walDir()).sort();
const jobFiles = (): string[] => readdirSync(join(root, "jobs")).sort();

async function openLog(options: { dir?: string; segmentBytes?: number } = {}): Promise<WriteAheadLog> {
  const jobs = join(root, "jobs");
  const label = `log ${(count += 1)}`;
  const log = await WriteAheadLog.open({
    dir: options.dir ?? walDir(),
    locksDir: join(root, "locks"),
    ...(options.segmentBytes === undefined ? {} : { segmentBytes: options.segmentBytes }),
    hasFile: async (id) => existsSync(join(jobs, `${id}.json`)),
    materialise: async (list: LoggedJob[]) => {
      written.push({ by: label, ids: list.map((job) => job.id) });
      for (const job of list) writeFileSync(join(jobs, `${job.id}.json`), JSON.stringify(job.value));
    },
  });
  labels.set(log, label);
  opened.push(log);
  return log;
}

async function closeLog(log: WriteAheadLog): Promise<void> {
  opened.splice(opened.indexOf(log), 1);
  await log.close();
}

function deadLock(name: string): void {
  mkdirSync(walDir(), { recursive: true });
  writeFileSync(join(walDir(), `${name}.lock`), JSON.stringify({ pid: 999999, startTime: "0:0", instance: "deadbeefdeadbeef", at: new Date().toISOString() }));
}

/** A dead process's log as it left it: its segments (number → lines) and its lock. */
function deadLog(name: string, segments: Record<number, string>): void {
  deadLock(name);
  for (const [number, lines] of Object.entries(segments)) writeFileSync(join(walDir(), `${name}.${String(number).padStart(6, "0")}.log`), lines);
}

const job = (id: string, value: unknown = { id }): string => encodeJobLine(id, JSON.stringify(value));
const done = (id: string): string => encodeEntry({ t: "done", id });
const append = (log: WriteAheadLog, id: string, value: unknown = { id }): Promise<void> => log.appendJob(id, JSON.stringify(value), value);

describe("write-ahead log: its own log", () => {
  it("is named for its process and instance, holds its lock, and appends to one segment until the default size", async () => {
    const log = await openLog();
    expect(log.name).toMatch(new RegExp(`^${process.pid}-[0-9a-f]{16}$`));
    expect(walFiles()).toEqual([`${log.name}.lock`]);
    await append(log, "a-1");
    await append(log, "a-2");
    await log.tombstone("a-1");
    expect(walFiles()).toEqual([`${log.name}.000001.log`, `${log.name}.lock`]);
    expect(decodeChunk(readFileSync(join(walDir(), `${log.name}.000001.log`))).entries).toEqual([
      { t: "job", id: "a-1", r: { id: "a-1" } },
      { t: "job", id: "a-2", r: { id: "a-2" } },
      { t: "done", id: "a-1" },
    ]);
    expect(DEFAULT_SEGMENT_BYTES).toBe(4 * 1024 * 1024);
  });

  it("creates its folder with the missing parents, and opens again in a folder that exists", async () => {
    const dir = join(root, "queue", "deeper", "wal");
    const first = await openLog({ dir });
    await closeLog(first);
    expect(readdirSync(dir)).toEqual([]);
    const second = await openLog({ dir });
    expect(readdirSync(dir)).toEqual([`${second.name}.lock`]);
  });

  it("answers pending jobs: the record it was given, none for a tombstoned or unknown id, also after a look at the folder", async () => {
    const log = await openLog();
    const values = { "p-1": { n: 1 }, "p-2": { n: 2 }, "p-3": { n: 3 } };
    for (const [id, value] of Object.entries(values)) await append(log, id, value);
    await log.tombstone("p-2");
    const check = (): void => {
      expect(log.pendingIds()).toEqual(["p-1", "p-3"]);
      expect(log.pending("p-1")).toBe(values["p-1"]);
      expect(log.pending("p-3")).toBe(values["p-3"]);
      expect(log.pending("p-2")).toBeUndefined();
      expect(log.pending("p-9")).toBeUndefined();
    };
    check();
    // Its own segments are not read back as another log's (the records stay the ones given).
    await log.catchUp();
    check();
    await log.refresh();
    check();
  });

  it("closes once: a second close resolves when the log is closed, and writes nothing again", async () => {
    const log = await openLog();
    await append(log, "c-1");
    opened.splice(0);
    const first = log.close();
    await log.close();
    expect(walFiles()).toEqual([]);
    expect(written).toEqual([{ by: by(log), ids: ["c-1"] }]);
    await first;
    await log.close();
    expect(written).toHaveLength(1);
    await expect(append(log, "c-2")).rejects.toThrow("the write-ahead log is closed");
  });

  it("rolls to a new segment past its size", async () => {
    const log = await openLog({ segmentBytes: 10 });
    await append(log, "r-1");
    await append(log, "r-2");
    expect(walFiles()).toEqual([`${log.name}.000001.log`, `${log.name}.000002.log`, `${log.name}.lock`]);
    expect(log.pendingIds()).toEqual(["r-1", "r-2"]);
  });
});

describe("write-ahead log: other logs in the folder", () => {
  it("sees another log's jobs and tombstones only once it looks again", async () => {
    const a = await openLog();
    const b = await openLog();
    await append(a, "x-1", { n: 1 });
    expect(b.pending("x-1")).toBeUndefined();
    await b.catchUp();
    expect(b.pending("x-1")).toEqual({ n: 1 });
    expect(b.pendingIds()).toEqual(["x-1"]);
    await a.tombstone("x-1");
    expect(a.pending("x-1")).toBeUndefined();
    expect(b.pendingIds()).toEqual(["x-1"]);
    await b.catchUp();
    expect(b.pendingIds()).toEqual([]);
    expect(b.pending("x-1")).toBeUndefined();
  });

  it("keeps the order in which it learned of jobs across looks", async () => {
    const a = await openLog();
    const b = await openLog();
    await append(a, "o-1");
    await append(b, "o-2");
    await a.catchUp();
    expect(a.pendingIds()).toEqual(["o-1", "o-2"]);
    await append(a, "o-3");
    await a.catchUp();
    expect(a.pendingIds()).toEqual(["o-1", "o-2", "o-3"]);
  });

  it("forgets another log's segments once they are gone, and keeps its own", async () => {
    const a = await openLog();
    const b = await openLog();
    await append(a, "f-1");
    await append(b, "f-2");
    await a.catchUp();
    expect(a.pendingIds()).toEqual(["f-1", "f-2"]);
    await closeLog(b);
    expect(written).toEqual([{ by: by(b), ids: ["f-2"] }]);
    await a.catchUp();
    expect(a.pendingIds()).toEqual(["f-1"]);
    expect(a.pending("f-2")).toBeUndefined();
  });

  it("leaves a live log alone on a refresh, and closes writing only its own queued jobs", async () => {
    const a = await openLog();
    const b = await openLog();
    await append(b, "l-1");
    await append(a, "l-2");
    await a.refresh();
    expect(a.pendingIds()).toEqual(["l-2", "l-1"]);
    expect(written).toEqual([]);
    await closeLog(a);
    expect(written).toEqual([{ by: by(a), ids: ["l-2"] }]);
    expect(walFiles()).toEqual([`${b.name}.000001.log`, `${b.name}.lock`].sort());
    expect(b.pendingIds()).toEqual(["l-1"]);
  });

  it("keeps, at close, a segment whose tombstone another log's record still needs", async () => {
    const a = await openLog();
    const b = await openLog();
    await append(a, "t-1");
    await b.catchUp();
    await b.tombstone("t-1");
    await closeLog(b);
    expect(written).toEqual([]);
    expect(walFiles()).toEqual([`${a.name}.000001.log`, `${a.name}.lock`, `${b.name}.000001.log`].sort());
    await a.catchUp();
    expect(a.pendingIds()).toEqual([]);
    await closeLog(a);
    expect(written).toEqual([]);
    expect(jobFiles()).toEqual([]);
  });

  it("leaves files that are not a log's alone", async () => {
    mkdirSync(walDir());
    const strays: Record<string, string> = {
      // A lock's name without a log's: not a log, however dead its owner.
      "undefined.lock": JSON.stringify({ pid: 999999, startTime: "0:0", instance: "deadbeefdeadbeef", at: new Date().toISOString() }),
      [`old.${DEAD}.000001.log`]: job("s-1"),
      [`${DEAD}.000001.log.bak`]: job("s-2"),
      [`${DEAD}.00001.log`]: job("s-3"),
      [`${DEAD}.0000001.log`]: job("s-4"),
      [`${DEAD}.lock.1234.0a0b0c0d.tmp`]: "",
      "notes.txt": "",
    };
    for (const [name, text] of Object.entries(strays)) writeFileSync(join(walDir(), name), text);
    const log = await openLog();
    await log.refresh();
    expect(log.pendingIds()).toEqual([]);
    expect(written).toEqual([]);
    expect(walFiles()).toEqual([...Object.keys(strays), `${log.name}.lock`].sort());
  });
});

describe("write-ahead log: a dead process's log", () => {
  it("is taken over on open: its queued jobs become files, a tombstoned one does not, its segments and lock go", async () => {
    deadLog(DEAD, { 1: job("d-1") + job("d-2"), 2: done("d-2") + job("d-3") });
    const log = await openLog();
    expect(written).toEqual([{ by: by(log), ids: ["d-1", "d-3"] }]);
    expect(jobFiles()).toEqual(["d-1.json", "d-3.json"]);
    expect(walFiles()).toEqual([`${log.name}.lock`]);
    expect(log.pendingIds()).toEqual([]);
  });

  it("whose segments are all gone: its lock goes", async () => {
    deadLock(DEAD);
    const log = await openLog();
    expect(walFiles()).toEqual([`${log.name}.lock`]);
    expect(written).toEqual([]);
  });

  it("waits, taken over, while a live process holds one of its jobs, and is finished on a later refresh", async () => {
    deadLog(DEAD, { 1: job("w-1"), 2: job("w-2") });
    const holder = newLockOwner();
    const jobLock = join(root, "locks", "w-1.lock");
    expect(await acquireLock(jobLock, holder)).toBe(true);
    const log = await openLog();
    // w-2's segment went with its file; w-1's stays, and so does the dead log's lock (held now).
    expect(written).toEqual([{ by: by(log), ids: ["w-2"] }]);
    expect(walFiles()).toEqual([`${DEAD}.000001.log`, `${DEAD}.lock`, `${log.name}.lock`].sort());
    // No one else takes it: the dead log's lock is this log's now.
    const other = await openLog();
    expect(written).toHaveLength(1);
    await closeLog(other);
    expect(walFiles()).toEqual([`${DEAD}.000001.log`, `${DEAD}.lock`, `${log.name}.lock`].sort());
    await releaseLock(jobLock, holder);
    retireLockOwner(holder);
    await log.refresh();
    expect(written).toEqual([
      { by: by(log), ids: ["w-2"] },
      { by: by(log), ids: ["w-1"] },
    ]);
    expect(walFiles()).toEqual([`${log.name}.lock`]);
  });

  it("is not taken over by a log that closes during its refresh", async () => {
    const log = await openLog();
    deadLog(DEAD, { 1: job("c-1") });
    const refreshed = log.refresh();
    const closed = closeLog(log);
    await Promise.all([refreshed, closed]);
    expect(written).toEqual([]);
    expect(walFiles()).toEqual([`${DEAD}.000001.log`, `${DEAD}.lock`]);
  });
});
