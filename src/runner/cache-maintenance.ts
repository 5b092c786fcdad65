/**
 * Keeping a repository cache in shape. The App's git calls in its caches and their worktrees
 * run without git's automatic maintenance (`NO_AUTO_MAINTENANCE`): after each fetch and commit
 * git would otherwise start `git maintenance run --auto`, which starts `git gc --auto`, two
 * processes that almost always find nothing to do. Instead, after each fetch, the runner looks
 * at the cache the way `git gc --auto` does (with git's default limits) and runs `git gc --auto`
 * only when that would do something: more than 27 loose objects in `objects/17` (about 6,700
 * in all, `gc.auto`) or more than 50 packs (`gc.autoPackLimit`).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { git } from "../workspace/index.js";

/** `gc.auto`'s default: loose objects before a gc, estimated from one of the 256 folders as git does. */
export const GC_AUTO_LOOSE = 6700;
/** `gc.autoPackLimit`'s default: packs (without a `.keep`) before they are consolidated. */
export const GC_AUTO_PACKS = 50;

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** True when `git gc --auto` would work in the (bare) repository `gitDir`, by git's own estimate. */
export function gcDue(gitDir: string): boolean {
  const objects = join(gitDir, "objects");
  // git counts `objects/17` and scales by 256 (builtin/gc.c too_many_loose_objects).
  const loose = names(join(objects, "17")).filter((name) => /^[0-9a-f]{38}(?:[0-9a-f]{24})?$/.test(name)).length;
  if (loose > Math.ceil(GC_AUTO_LOOSE / 256)) return true;
  const packDir = join(objects, "pack");
  const all = names(packDir);
  const packs = all.filter((name) => name.endsWith(".pack") && !all.includes(`${name.slice(0, -".pack".length)}.keep`)).length;
  return packs > GC_AUTO_PACKS;
}

/**
 * Runs `git gc --auto` in the cache when {@link gcDue} says it would do something; in the
 * foreground (`gc.autoDetach=false`), so it ends with the call. Returns whether it ran.
 */
export async function maintainRepoCache(gitDir: string): Promise<boolean> {
  if (!gcDue(gitDir)) return false;
  await git(["-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"], { cwd: gitDir });
  return true;
}
