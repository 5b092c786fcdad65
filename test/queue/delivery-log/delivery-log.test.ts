import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DeliveryLog } from "../../../src/queue/index.js";
import { makeTempDir, removeTempDirs } from "../../support/tmp.js";

afterAll(removeTempDirs);

const linesOf = (path: string): string[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "");

describe("DeliveryLog", () => {
  it("creates its file, and remembers what it recorded across a reopen", async () => {
    const path = join(makeTempDir(), "deliveries");
    const log = await DeliveryLog.open(path);
    await log.add("d-1");
    await log.add("d-2");
    await log.add("d-1");
    await log.close();
    expect(readFileSync(path, "utf8")).toBe("d-1\nd-2\n");
    const again = await DeliveryLog.open(path);
    expect([again.has("d-1"), again.has("d-2"), again.has("d-3")]).toEqual([true, true, false]);
    await again.close();
  });

  it("ignores a torn last line (a crash mid-append) and rewrites the file without it", async () => {
    const path = join(makeTempDir(), "deliveries");
    writeFileSync(path, "d-1\n\nd-2\nd-3-cut-sh");
    const log = await DeliveryLog.open(path);
    expect([log.has("d-1"), log.has("d-2"), log.has("d-3-cut-sh"), log.has("")]).toEqual([true, true, false, false]);
    expect(readFileSync(path, "utf8")).toBe("d-1\nd-2\n");
    // What is appended next starts on its own line.
    await log.add("d-3");
    await log.close();
    expect(readFileSync(path, "utf8")).toBe("d-1\nd-2\nd-3\n");
  });

  it("leaves a whole file as it is when it opens", async () => {
    const path = join(makeTempDir(), "deliveries");
    writeFileSync(path, "d-1\nd-2\n");
    const before = statSync(path).ino;
    const log = await DeliveryLog.open(path, 10);
    await log.close();
    expect(readFileSync(path, "utf8")).toBe("d-1\nd-2\n");
    // Not rewritten either (a rewrite is a new file renamed into place).
    expect(statSync(path).ino).toBe(before);
  });

  it("keeps the newest ids within its bound, in memory and on disk", async () => {
    const path = join(makeTempDir(), "deliveries");
    const log = await DeliveryLog.open(path, 3);
    for (let n = 1; n <= 7; n += 1) await log.add(`d-${n}`);
    expect(["d-1", "d-2", "d-3", "d-4", "d-5", "d-6", "d-7"].map((id) => log.has(id))).toEqual([false, false, false, false, true, true, true]);
    await log.close();
    // Compacted at twice the bound: never more than that many lines, the newest kept.
    expect(linesOf(path).length).toBeLessThanOrEqual(6);
    expect(linesOf(path).slice(-3)).toEqual(["d-5", "d-6", "d-7"]);
    const again = await DeliveryLog.open(path, 3);
    expect(["d-4", "d-5", "d-6", "d-7"].map((id) => again.has(id))).toEqual([false, true, true, true]);
    await again.close();
  });

  it("loads only the newest ids of a file longer than its bound", async () => {
    const path = join(makeTempDir(), "deliveries");
    writeFileSync(path, ["a", "b", "c", "d", "e"].map((id) => `${id}\n`).join(""));
    const log = await DeliveryLog.open(path, 2);
    expect(["a", "b", "c", "d", "e"].map((id) => log.has(id))).toEqual([false, false, false, true, true]);
    await log.close();
  });

  it("refuses an id of more than one line, and a file it cannot read", async () => {
    const dir = makeTempDir();
    const log = await DeliveryLog.open(join(dir, "deliveries"));
    await expect(log.add("d-1\nd-2")).rejects.toThrow(/one line/);
    expect(log.has("d-1")).toBe(false);
    await log.close();
    mkdirSync(join(dir, "a-folder"));
    await expect(DeliveryLog.open(join(dir, "a-folder"))).rejects.toMatchObject({ code: "EISDIR" });
  });
  it("ignores a torn last line whatever the file starts with", async () => {
    const path = join(makeTempDir(), "deliveries");
    writeFileSync(path, "\nd-1\nd-2-cut");
    const log = await DeliveryLog.open(path);
    expect([log.has("d-1"), log.has("d-2-cut")]).toEqual([true, false]);
    await log.close();
    expect(readFileSync(path, "utf8")).toBe("d-1\n");
  });

  it("writes a burst of ids, added while a write is under way, one per line", async () => {
    const path = join(makeTempDir(), "deliveries");
    const log = await DeliveryLog.open(path);
    await Promise.all(["d-1", "d-2", "d-3", "d-4"].map((id) => log.add(id)));
    await log.close();
    expect(readFileSync(path, "utf8")).toBe("d-1\nd-2\nd-3\nd-4\n");
  });

  it("appends without rewriting the file until it holds twice the bound, then keeps the newest", async () => {
    const path = join(makeTempDir(), "deliveries");
    const log = await DeliveryLog.open(path, 3);
    await log.add("d-1");
    const first = statSync(path).ino;
    for (const id of ["d-2", "d-3", "d-4", "d-5"]) await log.add(id);
    expect([statSync(path).ino, linesOf(path)]).toEqual([first, ["d-1", "d-2", "d-3", "d-4", "d-5"]]);
    await log.add("d-6");
    expect(statSync(path).ino).not.toBe(first);
    expect(linesOf(path)).toEqual(["d-4", "d-5", "d-6"]);
    await log.close();
  });
});
