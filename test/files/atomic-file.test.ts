import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
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
});
