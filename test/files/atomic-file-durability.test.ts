/**
 * The order that makes an atomic write durable, seen through the file-system seam of src/files:
 * a recording wrapper around the real file system (nothing mocked, every call reaches the disk)
 * lists each call as it finished. A power loss cannot be staged in a test, but the calls that
 * survive one can be: the file's fsync before its rename, the folder's fsync after it, and the
 * caller (or `flushPendingWrites`) returning only once they are done.
 */
import { jest } from "@jest/globals";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BACKGROUND_FLUSH_DELAY_MS,
  flushPendingWrites,
  syncDirCoalesced,
  useFileSystem,
  writeFileAtomic,
  writeFileAtomicSync,
} from "../../src/files/atomic-file.js";
import type { AtomicFileSystem } from "../../src/files/file-system.js";
import { gate, recordingFileSystem, type FsHooks, type RecordingFileSystem } from "../support/recording-fs.js";

const written = ["open record.json.tmp wx", "write record.json.tmp"];
const renamed = ["close record.json.tmp", "rename record.json.tmp record.json"];
const folderFlushed = ["open . r", "fsync .", "close ."];
const fileFlushed = (name: string) => [`open ${name} r`, `fsync ${name}`, `close ${name}`];

describe("atomic writes, call by call", () => {
  let dir: string;
  let previous: AtomicFileSystem | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "harness-durable-"));
  });
  afterEach(async () => {
    await flushPendingWrites();
    if (previous) useFileSystem(previous);
    previous = undefined;
    jest.useRealTimers();
    rmSync(dir, { recursive: true, force: true });
  });
  function record(hooks: FsHooks = {}): RecordingFileSystem {
    const recorder = recordingFileSystem(dir, hooks);
    previous = useFileSystem(recorder.fs);
    return recorder;
  }
  const failWith = (code: string) => () => {
    throw Object.assign(new Error(`${code} (staged)`), { code });
  };

  it("a durable write: the file's fsync before the rename, the folder's after it, all before it returns", async () => {
    const recorder = record();
    await writeFileAtomic(join(dir, "record.json"), "{}\n");
    recorder.mark("returned");
    expect(recorder.events).toEqual([...written, "fsync record.json.tmp", ...renamed, ...folderFlushed, "returned"]);
    expect(readFileSync(join(dir, "record.json"), "utf8")).toBe("{}\n");
  });

  it("a synchronous write: the same order by default, and no fsync at all with fsync: false", () => {
    const recorder = record();
    writeFileAtomicSync(join(dir, "record.json"), "{}\n");
    recorder.mark("returned");
    writeFileAtomicSync(join(dir, "record.json"), "{}\n", { fsync: false });
    recorder.mark("returned");
    writeFileAtomicSync(join(dir, "record.json"), "{}\n", { fsync: true });
    expect(recorder.events).toEqual([
      ...written,
      "fsync record.json.tmp",
      ...renamed,
      ...folderFlushed,
      "returned",
      ...written,
      ...renamed,
      "returned",
      ...written,
      "fsync record.json.tmp",
      ...renamed,
      ...folderFlushed,
    ]);
  });

  it("a background write returns after the rename, unflushed; flushPendingWrites returns after the file's and the folder's fsync", async () => {
    const recorder = record();
    await writeFileAtomic(join(dir, "record.json"), "{}\n", { flush: "background" });
    recorder.mark("returned");
    await flushPendingWrites();
    recorder.mark("flushed");
    expect(recorder.events).toEqual([...written, ...renamed, "returned", ...fileFlushed("record.json"), ...folderFlushed, "flushed"]);
  });

  it("background writes within one delay share a batch: each file flushed once, the folder once; a later write gets a batch of its own", async () => {
    jest.useFakeTimers({
      doNotFake: ["nextTick", "queueMicrotask", "setImmediate", "clearImmediate", "setInterval", "clearInterval", "Date", "hrtime", "performance"],
    });
    const recorder = record();
    for (const name of ["a.json", "b.json", "a.json"]) await writeFileAtomic(join(dir, name), name, { flush: "background" });
    recorder.events.length = 0;
    jest.advanceTimersByTime(BACKGROUND_FLUSH_DELAY_MS);
    await flushPendingWrites();
    expect(recorder.events).toEqual([...fileFlushed("a.json"), ...fileFlushed("b.json"), ...folderFlushed]);
    recorder.events.length = 0;
    await writeFileAtomic(join(dir, "c.json"), "c", { flush: "background" });
    recorder.events.length = 0;
    jest.advanceTimersByTime(BACKGROUND_FLUSH_DELAY_MS);
    await flushPendingWrites();
    expect(recorder.events).toEqual([...fileFlushed("c.json"), ...folderFlushed]);
  });

  it("flushPendingWrites called while a batch is flushing waits for that batch's fsyncs", async () => {
    const held = gate();
    const recorder = record({ fsync: (name) => (name === "record.json" ? held.hook() : undefined) });
    await writeFileAtomic(join(dir, "record.json"), "{}\n", { flush: "background" });
    await held.reached;
    const flushed = flushPendingWrites().then(() => recorder.mark("flushed"));
    // Every call before the held fsync has finished; let whatever else could run, run.
    await new Promise((resolve) => setImmediate(resolve));
    recorder.mark("released");
    held.release();
    await flushed;
    expect(recorder.events).toEqual([
      ...written,
      ...renamed,
      "open record.json r",
      "released",
      "fsync record.json",
      "close record.json",
      ...folderFlushed,
      "flushed",
    ]);
  });

  it("a background flush whose file or folder is gone by then finishes without failing", async () => {
    const recorder = record();
    const sub = join(dir, "sub");
    mkdirSync(sub);
    await writeFileAtomic(join(sub, "gone.json"), "{}\n", { flush: "background" });
    rmSync(sub, { recursive: true });
    await expect(flushPendingWrites()).resolves.toBeUndefined();
    expect(recorder.events.slice(-2)).toEqual(["open sub/gone.json r !ENOENT", "open sub r !ENOENT"]);
  });

  it.each([
    ["synchronous", (path: string) => Promise.resolve().then(() => writeFileAtomicSync(path, "x"))],
    ["durable", (path: string) => writeFileAtomic(path, "x")],
  ])("a %s write that fails to write closes the temp file and removes it", async (_mode, write) => {
    const recorder = record({ write: failWith("ENOSPC") });
    await expect(write(join(dir, "record.json"))).rejects.toMatchObject({ code: "ENOSPC" });
    expect(recorder.events).toEqual(["open record.json.tmp wx", "write record.json.tmp !ENOSPC", "close record.json.tmp", "rm record.json.tmp"]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a synchronous write whose folder goes before the rename fails with the rename's error", () => {
    const sub = join(dir, "sub");
    mkdirSync(sub);
    const recorder = record({ rename: () => rmSync(sub, { recursive: true }) });
    let error: NodeJS.ErrnoException | undefined;
    try {
      writeFileAtomicSync(join(sub, "record.json"), "x");
    } catch (caught) {
      error = caught as NodeJS.ErrnoException;
    }
    expect(error).toMatchObject({ code: "ENOENT", syscall: "rename" });
    expect(recorder.events.slice(-3)).toEqual(["close sub/record.json.tmp", "rename sub/record.json.tmp sub/record.json !ENOENT", "rm sub/record.json.tmp"]);
  });

  it("a synchronous write where the folder refuses fsync still succeeds, and closes the folder", () => {
    const recorder = record({ fsync: (name) => (name === "." ? failWith("EINVAL")() : undefined) });
    writeFileAtomicSync(join(dir, "record.json"), "{}\n");
    expect(recorder.events).toEqual([...written, "fsync record.json.tmp", ...renamed, "open . r", "fsync . !EINVAL", "close ."]);
    expect(readFileSync(join(dir, "record.json"), "utf8")).toBe("{}\n");
  });
});

describe("syncDirCoalesced", () => {
  let dir: string;
  let previous: AtomicFileSystem | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "harness-dirsync-"));
  });
  afterEach(() => {
    if (previous) useFileSystem(previous);
    previous = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  function record(hooks: FsHooks = {}): RecordingFileSystem {
    const recorder = recordingFileSystem(dir, hooks);
    previous = useFileSystem(recorder.fs);
    return recorder;
  }

  it("callers arriving while a flush runs share the next one, and return only after it", async () => {
    const held = gate();
    let fsyncs = 0;
    const recorder = record({ fsync: () => (++fsyncs === 1 ? held.hook() : undefined) });
    const first = syncDirCoalesced(dir).then(() => recorder.mark("first"));
    await held.reached;
    const second = syncDirCoalesced(dir).then(() => recorder.mark("second"));
    const third = syncDirCoalesced(dir).then(() => recorder.mark("third"));
    held.release();
    await Promise.all([first, second, third]);
    expect(recorder.events).toEqual([...folderFlushed, "first", ...folderFlushed, "second", "third"]);
  });

  it("a caller arriving as a flush ends, before the next has started, still shares the next", async () => {
    const recorder = record();
    const first = syncDirCoalesced(dir);
    const second = syncDirCoalesced(dir);
    let third: Promise<void> | undefined;
    const late = first.then(() => {
      third = syncDirCoalesced(dir);
    });
    await Promise.all([first, second, late]);
    await third;
    expect(recorder.events).toEqual([...folderFlushed, ...folderFlushed]);
  });

  it("a flush that fails fails its own callers only: the next one still runs", async () => {
    let fsyncs = 0;
    const recorder = record({
      fsync: () => {
        if (++fsyncs === 1) throw Object.assign(new Error("EIO (staged)"), { code: "EIO" });
      },
    });
    const first = syncDirCoalesced(dir);
    const second = syncDirCoalesced(dir);
    await expect(first).rejects.toMatchObject({ code: "EIO" });
    await expect(second).resolves.toBeUndefined();
    expect(recorder.events).toEqual(["open . r", "fsync . !EIO", "close .", ...folderFlushed]);
  });

  it("a flush of a folder whose last flush ended starts at once", async () => {
    const started: string[] = [];
    record({ open: (name) => void started.push(name) });
    await syncDirCoalesced(dir);
    const again = syncDirCoalesced(dir);
    expect(started).toEqual([".", "."]);
    await again;
  });
});
