/**
 * The scratch clone: a fresh clone of the target with the check's commit in it, checked out by
 * git, so every byte, mode and link the suite sees comes from checking out the commit, the way
 * CI gets it. With a depth, the clone holds only the last `depth` commits, as
 * `actions/checkout` gives by default. The clone never starts background git work
 * (`gc.auto=0`, `maintenance.auto=false`): nothing may still be writing when the scratch
 * folder is removed.
 */
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { git } from "../git.js";
import { CLEAN_CLONE_STEP_TIMEOUT_MS } from "./limits.js";
import type { CleanCloneTarget } from "./target.js";

/** Settings written into the clone (and used by the calls that make it): no automatic gc or maintenance. */
export const CLONE_QUIET_CONFIG: readonly string[] = ["-c", "gc.auto=0", "-c", "maintenance.auto=false"];

const read = (cwd: string) => ({ cwd, readOnly: true, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });
const write = (cwd: string) => ({ cwd, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });
const CLONE = [...CLONE_QUIET_CONFIG, "clone", ...CLONE_QUIET_CONFIG, "-q", "--no-checkout"];

/**
 * Clones the target by its file-system path (`--no-hardlinks`, never the network) without a
 * checkout: the whole history and every object the target holds, in `dir/.git/objects`.
 */
export async function cloneTarget(target: CleanCloneTarget, dir: string): Promise<{ objectsDir: string }> {
  await git([...CLONE, "--no-hardlinks", "--", target.top, dir], read(dirname(dir)));
  return { objectsDir: join(dir, ".git", "objects") };
}

/** Points HEAD of a clone at `commit`: on the target's branch name when it has one, else detached. */
async function pointHead(dir: string, target: CleanCloneTarget, commit: string): Promise<void> {
  if (target.branch === undefined) {
    await git(["update-ref", "--no-deref", "HEAD", commit], write(dir));
    return;
  }
  await git(["update-ref", `refs/heads/${target.branch}`, commit], write(dir));
  // A clone usually starts on the target's branch already; a linked worktree's may not.
  const head = await readFile(join(dir, ".git", "HEAD"), "utf8").catch(() => "");
  if (head.trim() !== `ref: refs/heads/${target.branch}`) await git(["symbolic-ref", "HEAD", `refs/heads/${target.branch}`], write(dir));
}

export interface CheckOutArgs {
  target: CleanCloneTarget;
  /** The clone {@link cloneTarget} made, holding `commit`'s objects. */
  historyDir: string;
  commit: string;
  /** Where the suite's checkout goes; `historyDir` itself when no depth is asked. */
  cloneDir: string;
  /** Only the last `depth` commits of history; the whole history when absent. */
  depth?: number;
}

/**
 * Puts `commit` on HEAD and checks it out in `cloneDir`. With a depth, `cloneDir` is a shallow
 * clone of `historyDir` over `file://`, so git itself cuts the history.
 */
export async function checkOutCommit(args: CheckOutArgs): Promise<void> {
  const { target, historyDir, commit, cloneDir } = args;
  await pointHead(historyDir, target, commit);
  if (args.depth !== undefined) {
    await git([...CLONE, `--depth=${args.depth}`, "--", `file://${historyDir}`, cloneDir], read(dirname(cloneDir)));
  }
  const checkout = target.branch !== undefined ? [target.branch] : ["--detach", commit];
  await git([...CLONE_QUIET_CONFIG, "checkout", "-q", "-f", ...checkout, "--"], write(cloneDir));
}
