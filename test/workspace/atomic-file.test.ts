import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { flushPendingWrites, writeFileAtomic } from "../../src/workspace/index.js";

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
});
