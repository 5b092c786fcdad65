/**
 * Loose objects written straight into a repository's object folder, with ids of a chosen
 * prefix: git's automatic gc estimates the loose objects from `objects/17` alone.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { git, HARNESS_IDENTITY } from "../../src/workspace/index.js";

/** Writes `count` distinct blobs whose ids begin with `17` into `objectsDir`; returns their ids. */
export function writeLooseObjectsIn17(objectsDir: string, count: number, tag = "blob"): string[] {
  const ids: string[] = [];
  for (let n = 0; ids.length < count; n += 1) {
    const content = Buffer.from(`${tag} ${n}\n`);
    const object = Buffer.concat([Buffer.from(`blob ${content.length}\0`), content]);
    const id = createHash("sha1").update(object).digest("hex");
    if (!id.startsWith("17")) continue;
    mkdirSync(join(objectsDir, "17"), { recursive: true });
    writeFileSync(join(objectsDir, "17", id.slice(2)), deflateSync(object));
    ids.push(id);
  }
  return ids;
}

/** How many loose objects `objects/17` holds. */
export function looseIn17(objectsDir: string): number {
  try {
    return readdirSync(join(objectsDir, "17")).length;
  } catch {
    return 0;
  }
}

/** Makes `ids` (blobs) reachable from `ref` in the repository at `cwd`: a gc packs them instead of keeping them loose. */
export async function makeReachable(cwd: string, ids: readonly string[], ref: string): Promise<void> {
  const tree = await git(["mktree"], { cwd, input: ids.map((id, n) => `100644 blob ${id}\tf${n}\n`).join("") });
  const commit = await git(["commit-tree", tree, "-m", "reachable"], { cwd, env: HARNESS_IDENTITY });
  await git(["update-ref", ref, commit], { cwd });
}
