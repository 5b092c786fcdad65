import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gcDue, GC_AUTO_LOOSE, GC_AUTO_PACKS, maintainRepoCache } from "../../src/runner/cache-maintenance.js";
import { git } from "../../src/workspace/index.js";
import { looseIn17, makeReachable, writeLooseObjectsIn17 } from "../support/loose-objects.js";
import { countProcesses } from "../support/processes.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

async function bareRepo(): Promise<string> {
  const dir = join(makeTempDir(), "cache");
  mkdirSync(dir, { recursive: true });
  await git(["init", "--bare", "--quiet"], { cwd: dir });
  return dir;
}

describe("repository cache maintenance", () => {
  it("uses git's default limits: 6,700 loose objects (27 in objects/17) and 50 packs", () => {
    expect(GC_AUTO_LOOSE).toBe(6700);
    expect(GC_AUTO_PACKS).toBe(50);
  });

  it("runs git gc only once objects/17 holds more loose objects than git's estimate allows, and then packs them", async () => {
    const dir = await bareRepo();
    const objects = join(dir, "objects");
    writeLooseObjectsIn17(objects, 27);
    // Not objects: a folder's other files do not count.
    writeFileSync(join(objects, "17", "tmp_obj_x"), "");
    expect(gcDue(dir)).toBe(false);
    const idle = await countProcesses(() => maintainRepoCache(dir));
    expect(idle).toEqual({ result: false, programs: [] });
    const reachable = writeLooseObjectsIn17(objects, 28, "reachable");
    await makeReachable(dir, reachable, "refs/heads/main");
    expect(gcDue(dir)).toBe(true);
    const ran = await countProcesses(() => maintainRepoCache(dir));
    expect(ran).toEqual({ result: true, programs: ["git"] });
    // Reachable: packed by git gc --auto.
    expect(reachable.filter((id) => existsSync(join(objects, "17", id.slice(2))))).toEqual([]);
    expect(looseIn17(objects)).toBe(28);
    expect(gcDue(dir)).toBe(false);
  });

  it("counts packs without a .keep, and is due above 50", async () => {
    const dir = await bareRepo();
    const pack = join(dir, "objects", "pack");
    mkdirSync(pack, { recursive: true });
    for (let n = 0; n < 50; n += 1) writeFileSync(join(pack, `pack-${String(n).padStart(40, "0")}.pack`), "");
    writeFileSync(join(pack, `pack-${"0".repeat(40)}.idx`), "");
    expect(gcDue(dir)).toBe(false);
    writeFileSync(join(pack, `pack-${"a".repeat(40)}.pack`), "");
    writeFileSync(join(pack, `pack-${"a".repeat(40)}.keep`), "");
    expect(gcDue(dir)).toBe(false);
    writeFileSync(join(pack, `pack-${"b".repeat(40)}.pack`), "");
    expect(gcDue(dir)).toBe(true);
  });

  it("finds nothing due in a folder that is no repository", () => {
    expect(gcDue(makeTempDir())).toBe(false);
    expect(readdirSync(makeTempDir())).toEqual([]);
  });
});
