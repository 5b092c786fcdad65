/**
 * The write-ahead log itself (`src/queue/wal/log.ts`, from reading another log's segment to the
 * end): real files in a temp folder, other logs written as their processes leave them. A live
 * other log is named for pid 1 (a process that is always running) or for a lock owner of this
 * process (dead once retired); a dead one for a pid no process has. `hasFile` and `materialise`
 * are the test's own, over a real jobs folder; `hasFile` can act once, when first asked about a
 * job, to stand for another process working meanwhile (deterministic, no timing).
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { identityOf } from "../../../src/exec/index.js";
import { newLockOwner, retireLockOwner, type LockOwner } from "../../../src/queue/job-lock.js";
import { decodeChunk, encodeEntry, encodeJobLine, WriteAheadLog, type LoggedJob } from "../../../src/queue/wal/index.js";
import { tempDir } from "../helpers.js";

/** A log whose owner is dead: pid 999999 with a start time no process has. */
const DEAD = "999999-deadbeefdeadbeef";
const DEAD_OWNER = { pid: 999999, startTime: "0:0", instance: "deadbeefdeadbeef" };

const job = (id: string, n: number): string => encodeJobLine(id, JSON.stringify({ n }));
const tomb = (id: string): string => encodeEntry({ t: "done", id });
const segmentOf = (log: string, number: number): string => `${log}.${String(number).padStart(6, "0")}.log`;

describe("write-ahead log: other logs, takeover, compaction, close", () => {
  let root = "";
  let remove: () => Promise<void> = async () => undefined;
  let dir = "";
  let locks = "";
  let jobs = "";
  /** Every materialise call, in order. */
  let calls: LoggedJob[][] = [];
  /** Run once, right after `hasFile` first looked for the job. */
  let onHasFile = new Map<string, () => void>();
  const logs: WriteAheadLog[] = [];
  const owners: LockOwner[] = [];

  beforeEach(async () => {
    ({ dir: root, remove } = await tempDir("harness-wal-log-b-"));
    dir = join(root, "wal");
    locks = join(root, "locks");
    jobs = join(root, "jobs");
    for (const folder of [dir, locks, jobs]) mkdirSync(folder, { recursive: true });
    calls = [];
    onHasFile = new Map();
  });

  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close();
    for (const owner of owners.splice(0)) retireLockOwner(owner);
    await remove();
  });

  async function openLog(segmentBytes?: number): Promise<WriteAheadLog> {
    const log = await WriteAheadLog.open({
      dir,
      locksDir: locks,
      ...(segmentBytes ? { segmentBytes } : {}),
      hasFile: async (id) => {
        const has = existsSync(join(jobs, `${id}.json`));
        const act = onHasFile.get(id);
        onHasFile.delete(id);
        act?.();
        return has;
      },
      materialise: async (written) => {
        calls.push(written);
        for (const { id, value } of written) writeFileSync(join(jobs, `${id}.json`), JSON.stringify(value));
      },
    });
    logs.push(log);
    return log;
  }

  function writeLock(path: string, owner: LockOwner): void {
    writeFileSync(path, JSON.stringify({ ...owner, at: new Date().toISOString() }));
  }

  /** A log held by a live process (pid 1, always running); its name sorts before this process's logs. */
  function liveLog(instance = "live0001"): string {
    const pid1 = identityOf(1);
    if (!pid1) throw new Error("pid 1 is not running");
    const name = `1-${instance}`;
    writeLock(join(dir, `${name}.lock`), { ...pid1, instance });
    return name;
  }

  /** A log held by an owner of this process: alive until the test retires `owner`. */
  function ownedLog(): { name: string; owner: LockOwner } {
    const owner = newLockOwner();
    owners.push(owner);
    const name = `${owner.pid}-${owner.instance}`;
    writeLock(join(dir, `${name}.lock`), owner);
    return { name, owner };
  }

  function deadLog(...segments: string[]): void {
    segments.forEach((lines, index) => writeFileSync(join(dir, segmentOf(DEAD, index + 1)), lines));
    writeLock(join(dir, `${DEAD}.lock`), DEAD_OWNER);
  }

  const walFiles = (): string[] => readdirSync(dir).sort();
  const entriesOf = (file: string): unknown[] => decodeChunk(readFileSync(join(dir, file))).entries;
  /** This process's open file descriptors on files of the log folder. */
  const openInDir = (): string[] =>
    readdirSync("/proc/self/fd").flatMap((fd) => {
      try {
        const target = readlinkSync(`/proc/self/fd/${fd}`);
        return target.startsWith(dir) ? [target] : [];
      } catch {
        return [];
      }
    });

  it("reads another log's segment as it grows, only the bytes appended since the last look, a torn tail once it is whole", async () => {
    const other = ownedLog();
    const path = join(dir, segmentOf(other.name, 1));
    writeFileSync(path, job("j1", 1));
    const log = await openLog();
    expect(log.pendingIds()).toEqual(["j1"]);
    expect(log.pending("j1")).toEqual({ n: 1 });

    const third = job("j3", 3);
    appendFileSync(path, job("j2", 2) + third.slice(0, 12));
    await log.catchUp();
    expect(log.pendingIds()).toEqual(["j1", "j2"]);
    appendFileSync(path, third.slice(12) + tomb("j1"));
    await log.catchUp();
    expect(log.pendingIds()).toEqual(["j2", "j3"]);
    expect(log.pending("j1")).toBeUndefined();

    // The bytes read before are not read again: damaged in place, they change nothing.
    const size = readFileSync(path).length;
    writeFileSync(path, `${"x".repeat(size - 1)}\n`);
    await log.catchUp();
    expect(log.pendingIds()).toEqual(["j2", "j3"]);

    // Its owner gone, the log is taken over: the jobs read before become job files, and it goes.
    retireLockOwner(other.owner);
    await log.refresh();
    expect(calls).toEqual([
      [
        { id: "j2", value: { n: 2 } },
        { id: "j3", value: { n: 3 } },
      ],
    ]);
    expect(walFiles()).toEqual([`${log.name}.lock`]);
    expect(readdirSync(locks)).toEqual([]);
  });

  it("forgets a segment that can no longer be opened (ENOENT), throws any other error of opening one, and keeps no file open", async () => {
    const other = liveLog();
    const first = join(dir, segmentOf(other, 1));
    writeFileSync(first, job("j1", 1) + job("j2", 2));
    const log = await openLog();
    expect(log.pendingIds()).toEqual(["j1", "j2"]);
    expect(openInDir()).toEqual([]);

    // Shorter than what was read (cut by hand): not read again.
    writeFileSync(first, job("j1", 1));
    await log.catchUp();
    expect(log.pendingIds()).toEqual(["j1", "j2"]);
    expect(openInDir()).toEqual([]);

    // Gone between the listing and the open: a dangling link's name is listed, its open fails with ENOENT.
    rmSync(first);
    symlinkSync(join(dir, "nowhere"), first);
    symlinkSync(join(dir, "nowhere"), join(dir, segmentOf(other, 2)));
    await log.catchUp();
    expect(log.pendingIds()).toEqual([]);

    const loop = join(dir, segmentOf(other, 3));
    symlinkSync(loop, loop);
    await expect(log.catchUp()).rejects.toMatchObject({ code: "ELOOP" });
    rmSync(loop);
    await log.catchUp();
    expect(log.pendingIds()).toEqual([]);
  });

  it("leaves another live log's segments alone at close, and reads them no more when it has no job to write", async () => {
    const other = liveLog();
    const path = join(dir, segmentOf(other, 1));
    writeFileSync(path, job("l1", 1));
    const log = await openLog();
    expect(log.pendingIds()).toEqual(["l1"]);
    appendFileSync(path, job("l2", 2));
    await log.close();
    expect(log.pendingIds()).toEqual(["l1"]);
    expect(calls).toEqual([]);
    expect(walFiles()).toEqual([`${other}.lock`, segmentOf(other, 1)].sort());
    expect(readdirSync(jobs)).toEqual([]);
  });

  it("keeps a dead log, and its lock, while a live process holds one of its jobs' locks; takes it over at the next look once it is free", async () => {
    deadLog(job("d1", 1) + job("d2", 2) + job("d3", 3) + job("d4", 4) + tomb("d4"));
    writeFileSync(join(jobs, "d3.json"), "{}");
    const holder = newLockOwner();
    owners.push(holder);
    writeLock(join(locks, "d1.lock"), holder);

    const log = await openLog();
    // d2 is written; d1 waits for its holder, d3 has its file, d4 is done.
    expect(calls).toEqual([[{ id: "d2", value: { n: 2 } }]]);
    expect(walFiles()).toEqual([`${DEAD}.000001.log`, `${DEAD}.lock`, `${log.name}.lock`].sort());
    expect(JSON.parse(readFileSync(join(dir, `${DEAD}.lock`), "utf8"))).toMatchObject({ instance: log.name.split("-")[1] });
    expect(readdirSync(locks)).toEqual(["d1.lock"]);

    retireLockOwner(holder);
    await log.refresh();
    expect(calls).toEqual([[{ id: "d2", value: { n: 2 } }], [{ id: "d1", value: { n: 1 } }]]);
    expect(walFiles()).toEqual([`${log.name}.lock`]);
    expect(readdirSync(locks)).toEqual([]);
  });

  it("takes over only the dead log: this log's segments and a live log's stay", async () => {
    const other = liveLog();
    writeFileSync(join(dir, segmentOf(other, 1)), job("l1", 1));
    const log = await openLog();
    await log.appendJob("a1", JSON.stringify({ n: 1 }), { n: 1 });
    deadLog(job("d1", 1));
    await log.refresh();
    expect(calls).toEqual([[{ id: "d1", value: { n: 1 } }]]);
    expect(walFiles()).toEqual([`${other}.lock`, segmentOf(other, 1), segmentOf(log.name, 1), `${log.name}.lock`].sort());
    expect(log.pendingIds().sort()).toEqual(["a1", "l1"]);
  });

  it("writes a job logged twice once, with its later record", async () => {
    deadLog(job("d1", 1), job("d1", 2));
    const log = await openLog();
    expect(calls).toEqual([[{ id: "d1", value: { n: 2 } }]]);
    expect(walFiles()).toEqual([`${log.name}.lock`]);
  });

  it("carries a dead log's tombstone into this log when the job's record lives in a live log, and removes the dead log", async () => {
    const other = liveLog();
    writeFileSync(join(dir, segmentOf(other, 1)), job("x", 1));
    deadLog(tomb("x"));
    const log = await openLog();
    expect(walFiles()).toEqual([`${other}.lock`, segmentOf(other, 1), segmentOf(log.name, 1), `${log.name}.lock`].sort());
    expect(entriesOf(segmentOf(log.name, 1))).toEqual([{ t: "done", id: "x" }]);
    expect(log.pendingIds()).toEqual([]);
  });

  it("skips, in a takeover, a job whose later record went with a segment removed before", async () => {
    const other = ownedLog();
    writeFileSync(join(dir, segmentOf(other.name, 1)), job("x", 1) + job("y", 1));
    writeFileSync(join(dir, segmentOf(other.name, 2)), job("x", 2));
    const log = await openLog();
    expect(log.pendingIds()).toEqual(["x", "y"]);
    // Its owner removed the later segment (x was claimed: its file written, then done).
    rmSync(join(dir, segmentOf(other.name, 2)));
    await log.catchUp();
    expect(log.pendingIds()).toEqual(["y"]);
    retireLockOwner(other.owner);
    await log.refresh();
    expect(calls).toEqual([[{ id: "y", value: { n: 1 } }]]);
    expect(walFiles()).toEqual([`${log.name}.lock`]);
  });

  it("reads the other logs again under a job's lock: a job tombstoned or given its file meanwhile is not written", async () => {
    const other = liveLog();
    const path = join(dir, segmentOf(other, 1));
    writeFileSync(path, "");
    deadLog(job("d1", 1) + job("d2", 2));
    onHasFile.set("d1", () => appendFileSync(path, tomb("d1")));
    onHasFile.set("d2", () => writeFileSync(join(jobs, "d2.json"), "{}"));
    const log = await openLog();
    expect(calls).toEqual([]);
    expect(walFiles()).toEqual([`${other}.lock`, segmentOf(other, 1), `${log.name}.lock`].sort());
    expect(readdirSync(locks)).toEqual([]);
  });

  it("completes a takeover whose segment was removed by hand meanwhile", async () => {
    deadLog(job("d1", 1));
    onHasFile.set("d1", () => rmSync(join(dir, segmentOf(DEAD, 1))));
    const log = await openLog();
    expect(calls).toEqual([[{ id: "d1", value: { n: 1 } }]]);
    expect(walFiles()).toEqual([`${log.name}.lock`]);
  });

  it("keeps a job's later record when the segment of its earlier one goes, and forgets it with its own", async () => {
    const other = liveLog();
    writeFileSync(join(dir, segmentOf(other, 1)), job("x", 1));
    writeFileSync(join(dir, segmentOf(other, 2)), job("x", 2) + job("y", 1));
    writeFileSync(join(dir, segmentOf(other, 3)), job("y", 2));
    const log = await openLog();
    expect(log.pending("x")).toEqual({ n: 2 });
    rmSync(join(dir, segmentOf(other, 1)));
    await log.catchUp();
    expect(log.pending("x")).toEqual({ n: 2 });
    rmSync(join(dir, segmentOf(other, 3)));
    await log.catchUp();
    expect(log.pending("y")).toBeUndefined();
    rmSync(join(dir, segmentOf(other, 2)));
    await log.catchUp();
    expect(log.pendingIds()).toEqual([]);
  });

  it("holds a job tombstoned while any segment with its tombstone is there, and no longer once none is", async () => {
    const other = liveLog();
    const log = await openLog();
    await log.appendJob("x", JSON.stringify({ n: 1 }), { n: 1 });
    await log.tombstone("x");
    await log.appendJob("y", JSON.stringify({ n: 2 }), { n: 2 });
    writeFileSync(join(dir, segmentOf(other, 1)), tomb("x"));
    writeFileSync(join(dir, segmentOf(other, 2)), tomb("y"));
    await log.catchUp();
    expect(log.pendingIds()).toEqual([]);
    rmSync(join(dir, segmentOf(other, 1)));
    rmSync(join(dir, segmentOf(other, 2)));
    await log.catchUp();
    expect(log.pending("x")).toBeUndefined();
    expect(log.pending("y")).toEqual({ n: 2 });
  });

  it("removes its sealed segments whose jobs are tombstoned or have their files, keeps the others, the newest and other logs'", async () => {
    const other = liveLog();
    writeFileSync(join(dir, segmentOf(other, 1)), job("l1", 1));
    writeFileSync(join(jobs, "l1.json"), "{}");
    // Every batch fills a segment: one segment per append.
    const log = await openLog(1);
    for (const n of [1, 2, 3]) await log.appendJob(`a${n}`, JSON.stringify({ n }), { n });
    await log.tombstone("a1");
    writeFileSync(join(jobs, "a2.json"), "{}");
    await log.refresh();
    expect(walFiles()).toEqual([`${other}.lock`, segmentOf(other, 1), segmentOf(log.name, 3), segmentOf(log.name, 4), `${log.name}.lock`].sort());
    expect(entriesOf(segmentOf(log.name, 4))).toEqual([{ t: "done", id: "a1" }]);
    expect(log.pendingIds().sort()).toEqual(["a3", "l1"]);
    expect(calls).toEqual([]);
  });

  it("carries forward, when it removes a segment, only the tombstones whose job's record stays elsewhere untombstoned", async () => {
    const other = liveLog();
    writeFileSync(join(dir, segmentOf(other, 1)), job("x", 1) + job("y", 2) + tomb("y"));
    const log = await openLog(1);
    // One batch, one segment: x's record stays (the live log's), y is tombstoned there too, w was never logged, z's record goes with it.
    await Promise.all([log.tombstone("x"), log.tombstone("y"), log.tombstone("w"), log.appendJob("z", JSON.stringify({ n: 3 }), { n: 3 }), log.tombstone("z")]);
    await log.appendJob("a2", JSON.stringify({ n: 2 }), { n: 2 });
    await log.refresh();
    expect(walFiles()).toEqual([`${other}.lock`, segmentOf(other, 1), segmentOf(log.name, 2), segmentOf(log.name, 3), `${log.name}.lock`].sort());
    expect(entriesOf(segmentOf(log.name, 3))).toEqual([{ t: "done", id: "x" }]);
    expect(log.pendingIds()).toEqual(["a2"]);
  });

  it("at close writes its queued jobs' files and keeps only the segments with a tombstone still needed", async () => {
    const other = liveLog();
    writeFileSync(join(dir, segmentOf(other, 1)), job("x", 1));
    const log = await openLog(1);
    await Promise.all([log.tombstone("x"), log.tombstone("u")]);
    await log.appendJob("a2", JSON.stringify({ n: 2 }), { n: 2 });
    await log.appendJob("a3", JSON.stringify({ n: 3 }), { n: 3 });
    writeFileSync(join(jobs, "a3.json"), "{}");
    const name = log.name;
    await log.close();
    expect(calls).toEqual([[{ id: "a2", value: { n: 2 } }]]);
    expect(walFiles()).toEqual([`${other}.lock`, segmentOf(other, 1), segmentOf(name, 1)].sort());
    expect(entriesOf(segmentOf(name, 1))).toEqual([
      { t: "done", id: "x" },
      { t: "done", id: "u" },
    ]);
    expect(readdirSync(locks)).toEqual([]);
  });

  it("stops compacting once closed: the segments left are the close's to judge", async () => {
    const other = liveLog();
    writeFileSync(join(dir, segmentOf(other, 1)), job("x", 1));
    const log = await openLog(1);
    await log.appendJob("j1", JSON.stringify({ n: 1 }), { n: 1 });
    await log.tombstone("x");
    await log.appendJob("a3", JSON.stringify({ n: 3 }), { n: 3 });
    writeFileSync(join(jobs, "j1.json"), "{}");
    const name = log.name;
    let closing: Promise<void> = Promise.resolve();
    onHasFile.set("j1", () => {
      closing = log.close();
    });
    await log.refresh();
    await closing;
    expect(calls).toEqual([[{ id: "a3", value: { n: 3 } }]]);
    expect(walFiles()).toEqual([`${other}.lock`, segmentOf(other, 1), segmentOf(name, 2)].sort());
    expect(entriesOf(segmentOf(name, 2))).toEqual([{ t: "done", id: "x" }]);
  });
});
