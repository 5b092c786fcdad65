import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { flushPendingWrites, writeFileAtomic, writeFileAtomicSync } from "../../src/files/index.js";
import { appearedOnlyByRename, folderEvents, writtenNames } from "../support/fs-events.js";

describe("writeFileAtomic", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "harness-atomic-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("makes a background write whole and visible before it returns, then flushes it", async () => {
    const path = join(dir, "job.json");
    await writeFileAtomic(path, '{"v":1}\n', { flush: "background" });
    // Visible to another reader (or a restarted App) at once, with no temp file beside it.
    expect(readFileSync(path, "utf8")).toBe('{"v":1}\n');
    expect(readdirSync(dir)).toEqual(["job.json"]);
    await writeFileAtomic(path, '{"v":2}\n', { flush: "background" });
    await flushPendingWrites();
    expect(readFileSync(path, "utf8")).toBe('{"v":2}\n');
  });

  it("flushes a file removed before its flush without failing", async () => {
    const path = join(dir, "done.json");
    await writeFileAtomic(path, "{}\n", { flush: "background" });
    rmSync(path);
    await expect(flushPendingWrites()).resolves.toBeUndefined();
  });

  it("writes in place durably by default and leaves no temp file when the folder is gone", async () => {
    const path = join(dir, "now.json");
    await writeFileAtomic(path, "now\n");
    expect(readFileSync(path, "utf8")).toBe("now\n");
    await expect(writeFileAtomic(join(dir, "missing", "x.json"), "x", { flush: "background" })).rejects.toThrow(/ENOENT/);
    expect(readdirSync(dir)).toEqual(["now.json"]);
  });

  // Deterministic: the kernel reports every write to every name in the folder, so a write in
  // place (torn by a kill -9 half-way) would show as a change on the final name.
  it.each([
    ["durable", (path: string, data: string) => writeFileAtomic(path, data)],
    ["background", (path: string, data: string) => writeFileAtomic(path, data, { flush: "background" }).then(flushPendingWrites)],
    ["synchronous", (path: string, data: string) => writeFileAtomicSync(path, data)],
    ["synchronous without fsync", (path: string, data: string) => writeFileAtomicSync(path, data, { fsync: false })],
  ])("a %s write reaches the final name only by a rename of a written temp file beside it", async (_mode, write) => {
    const path = join(dir, "record.json");
    for (const version of [1, 2]) {
      const events = await folderEvents(dir, () => write(path, `{"v":${version}}\n`));
      expect(appearedOnlyByRename(events, "record.json")).toBe(true);
      const written = writtenNames(events);
      expect(written).toHaveLength(1);
      expect(written[0]).toMatch(new RegExp(`^record\\.json\\.${process.pid}\\.[0-9a-f]{8}\\.tmp$`));
      expect(readFileSync(path, "utf8")).toBe(`{"v":${version}}\n`);
      expect(readdirSync(dir)).toEqual(["record.json"]);
    }
  });

  it("the observation is live: a write in place shows as a change on the final name", async () => {
    const path = join(dir, "in-place.json");
    const events = await folderEvents(dir, () => writeFileSync(path, "{}\n"));
    expect(appearedOnlyByRename(events, "in-place.json")).toBe(false);
    expect(writtenNames(events)).toEqual(["in-place.json"]);
  });

  /** This process's open file descriptors that point into `dir` (the folder or a file in it). */
  function openIn(dir: string): string[] {
    const targets: string[] = [];
    for (const fd of readdirSync("/proc/self/fd")) {
      try {
        const target = readlinkSync(`/proc/self/fd/${fd}`);
        if (target === dir || target.startsWith(`${dir}/`)) targets.push(target);
      } catch {
        // The descriptor readdir itself used, closed meanwhile.
      }
    }
    return targets;
  }

  it.each([
    ["durable", (path: string, data: string) => writeFileAtomic(path, data)],
    ["background", (path: string, data: string) => writeFileAtomic(path, data, { flush: "background" }).then(flushPendingWrites)],
    ["synchronous", (path: string, data: string) => writeFileAtomicSync(path, data)],
  ])("a %s write leaves no file or folder of it open", async (_mode, write) => {
    for (const version of [1, 2, 3]) await write(join(dir, `record-${version}.json`), `{"v":${version}}\n`);
    expect(openIn(dir)).toEqual([]);
  });

  it("fails with the write's own error when the folder is gone", async () => {
    const error = await writeFileAtomic(join(dir, "missing", "x.json"), "x").then(
      () => undefined,
      (caught: unknown) => caught as NodeJS.ErrnoException,
    );
    expect(error?.code).toBe("ENOENT");
    expect(error?.syscall).toBe("open");
  });

  it.each([
    ["durable", (path: string, data: string) => writeFileAtomic(path, data)],
    ["background", (path: string, data: string) => writeFileAtomic(path, data, { flush: "background" })],
    ["synchronous", (path: string, data: string) => Promise.resolve().then(() => writeFileAtomicSync(path, data))],
  ])("a %s write whose rename fails throws its error and removes its temp file", async (_mode, write) => {
    // A folder where the file should go: the rename onto it fails after the temp file was written.
    mkdirSync(join(dir, "taken.json", "inside"), { recursive: true });
    const error = await write(join(dir, "taken.json"), "x").then(
      () => undefined,
      (caught: unknown) => caught as NodeJS.ErrnoException,
    );
    expect(error?.syscall).toBe("rename");
    expect(readdirSync(dir)).toEqual(["taken.json"]);
    expect(openIn(dir)).toEqual([]);
  });
});
