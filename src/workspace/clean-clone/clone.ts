/**
 * The scratch clone: a fresh clone of the target with the check's commit in it, checked out by
 * git, so every byte, mode and link the suite sees comes from checking out the commit, the way
 * CI gets it. With a depth, the clone holds only the last `depth` commits, as
 * `actions/checkout` gives by default. The clone never starts background git work
 * (`gc.auto=0`, `maintenance.auto=false`): nothing may still be writing when the scratch
 * folder is removed.
 */
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { GitError } from "../git-errors.js";
import { git } from "../git.js";
import { CLEAN_CLONE_STEP_TIMEOUT_MS } from "./limits.js";
import type { CleanCloneTarget } from "./target.js";

/** Settings written into the clone (and used by the calls that make it): no automatic gc or maintenance. */
export const CLONE_QUIET_CONFIG: readonly string[] = ["-c", "gc.auto=0", "-c", "maintenance.auto=false"];

// Stryker disable next-line ObjectLiteral,BooleanLiteral: the clones name absolute paths and take no optional lock; the folder and the bound only matter if git hangs
const read = (cwd: string) => ({ cwd, readOnly: true, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });
const write = (cwd: string) => ({ cwd, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });
/**
 * No template (`--template=`): the sample hooks, `description` and `info/exclude` it would copy
 * are a dozen files nothing reads (hooks never run from a harness call), each one more file to
 * create before the clone is ready.
 */
const CLONE = [...CLONE_QUIET_CONFIG, "clone", ...CLONE_QUIET_CONFIG, "-q", "--no-checkout", "--template="];

/**
 * Clones the target by its file-system path (never the network) without a checkout: the whole
 * history and every object the target holds, in `dir/.git/objects`.
 *
 * The clone copies the target's object folder file by file (`--no-hardlinks`), which is the
 * cheap way (on 80,000 files, packed: about 0.1 s against 0.5 s through the pack protocol).
 * But the target's object store is shared with other tasks' worktrees, and a file another git
 * process is writing there (`tmp_obj_*`, `tmp_pack_*`) can be renamed away between git's
 * listing and its copy: "failed to copy file to …". That copy, and only that, is then done
 * once more through the pack protocol (`--no-local`), which reads objects by the refs it
 * listed and never sees a scratch file, so it cannot meet the same race.
 */
export async function cloneTarget(target: Pick<CleanCloneTarget, "top">, dir: string): Promise<{ objectsDir: string }> {
  try {
    await git([...CLONE, "--no-hardlinks", "--", target.top, dir], read(dirname(dir)));
  } catch (error) {
    if (!(error instanceof GitError) || error.kind !== "object-copy") throw error;
    await rm(dir, { recursive: true, force: true });
    await git([...CLONE, "--no-local", "--", target.top, dir], read(dirname(dir)));
  }
  return { objectsDir: join(dir, ".git", "objects") };
}

/** Points HEAD of a clone at `commit`: on the target's branch name when it has one, else detached. */
async function pointHead(dir: string, target: CleanCloneTarget, commit: string): Promise<void> {
  if (target.branch === undefined) {
    await git(["update-ref", "--no-deref", "HEAD", commit], write(dir));
    return;
  }
  await git(["update-ref", `refs/heads/${target.branch}`, commit], write(dir));
  // A clone starts on the branch its source's HEAD names; a linked worktree's branch may be another.
  await git(["symbolic-ref", "HEAD", `refs/heads/${target.branch}`], write(dir));
}

/**
 * Git's parallel checkout, one worker per CPU (`checkout.workers=0`): the files are the same
 * (entries with a filter are still written by git in order), and writing tens of thousands of
 * them is the largest part of construction. 20,000 files took 3.8–7.8 s instead of 17–45 s on
 * the shared 2-core machine under load; part of that is the scheduler giving more processes
 * more of a contended CPU, so expect less on a quiet machine.
 */
const PARALLEL_CHECKOUT: readonly string[] = ["-c", "checkout.workers=0"];

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
  let checkout: string[];
  if (args.depth !== undefined) {
    // The shallow clone takes the history clone's branch (or detached HEAD): it must point at the commit first.
    await pointHead(historyDir, target, commit);
    await git([...CLONE, `--depth=${args.depth}`, "--", `file://${historyDir}`, cloneDir], read(dirname(cloneDir)));
    // It is on the branch, or detached at the commit, already: only the files are written.
    checkout = [];
  } else {
    // One git process: the branch is made (or moved) at the commit, HEAD put on it, and the files written.
    checkout = target.branch !== undefined ? ["-B", target.branch, commit] : ["--detach", commit];
  }
  await git([...CLONE_QUIET_CONFIG, ...PARALLEL_CHECKOUT, "checkout", "-q", "-f", ...checkout, "--"], write(cloneDir));
}
