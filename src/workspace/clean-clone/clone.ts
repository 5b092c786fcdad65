/**
 * The scratch clone: a fresh clone of the target with the check's commit in it, checked out by
 * git, so every byte, mode and link the suite sees comes from checking out the commit, the way
 * CI gets it. With a depth, the clone holds only the last `depth` commits, as
 * `actions/checkout` gives by default. The clone never starts background git work
 * (`gc.auto=0`, `maintenance.auto=false`): nothing may still be writing when the scratch
 * folder is removed.
 */
import { cp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { git } from "../git.js";
import { CLEAN_CLONE_STEP_TIMEOUT_MS } from "./limits.js";
import type { CleanCloneTarget } from "./target.js";

/** Settings written into the clone (and used by the calls that make it): no automatic gc or maintenance. */
export const CLONE_QUIET_CONFIG: readonly string[] = ["-c", "gc.auto=0", "-c", "maintenance.auto=false"];

const read = (cwd: string) => ({ cwd, readOnly: true, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });
const write = (cwd: string) => ({ cwd, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS });

export interface CloneSource {
  /** The bare scratch repository whose object directory holds the check's new objects. */
  sourceDir: string;
  objectsDir: string;
}

/**
 * Points the scratch repository's HEAD at `commit` (on the target's branch name when it has
 * one) and lets it borrow the target's objects, so it can serve a shallow clone.
 */
async function prepareSource(target: CleanCloneTarget, source: CloneSource, commit: string): Promise<void> {
  await writeFile(join(source.objectsDir, "info", "alternates"), `${target.objectsDir}\n`);
  if (target.branch !== undefined) {
    await git(["update-ref", `refs/heads/${target.branch}`, commit], write(source.sourceDir));
    await git(["symbolic-ref", "HEAD", `refs/heads/${target.branch}`], write(source.sourceDir));
  } else {
    await git(["update-ref", "--no-deref", "HEAD", commit], write(source.sourceDir));
  }
}

/** Points HEAD of a full clone of the target at `commit`: on the target's branch name when it has one, else detached. */
async function pointHead(cloneDir: string, target: CleanCloneTarget, commit: string): Promise<void> {
  if (target.branch === undefined) {
    await git(["update-ref", "--no-deref", "HEAD", commit], write(cloneDir));
    return;
  }
  await git(["update-ref", `refs/heads/${target.branch}`, commit], write(cloneDir));
  await git(["symbolic-ref", "HEAD", `refs/heads/${target.branch}`], write(cloneDir));
}

export interface MakeCloneArgs {
  target: CleanCloneTarget;
  source: CloneSource;
  commit: string;
  cloneDir: string;
  /** Only the last `depth` commits of history; the whole history when absent. */
  depth?: number;
}

/**
 * Makes the clone at `args.cloneDir` and checks out `args.commit` there. Without a depth the
 * target is cloned by path (`--no-hardlinks`, never the network) and the few new objects are
 * copied in; with one, the scratch repository is cloned over `file://` so git cuts the history.
 */
export async function makeClone(args: MakeCloneArgs): Promise<void> {
  const { target, source, commit, cloneDir } = args;
  const common = [...CLONE_QUIET_CONFIG, "clone", ...CLONE_QUIET_CONFIG, "-q", "--no-checkout"];
  if (args.depth !== undefined) {
    await prepareSource(target, source, commit);
    await git([...common, `--depth=${args.depth}`, "--", `file://${source.sourceDir}`, cloneDir], read(join(cloneDir, "..")));
  } else {
    await git([...common, "--no-hardlinks", "--", target.top, cloneDir], read(join(cloneDir, "..")));
    // Loose objects only: the scratch directory holds nothing else. Existing ones are kept.
    await cp(source.objectsDir, join(cloneDir, ".git", "objects"), { recursive: true, force: false, errorOnExist: false, filter: (path) => !path.endsWith(join("objects", "info")) && !path.endsWith(join("objects", "pack")) });
    await pointHead(cloneDir, target, commit);
  }
  const checkout = target.branch !== undefined ? [target.branch] : ["--detach", commit];
  await git([...CLONE_QUIET_CONFIG, "checkout", "-q", "-f", ...checkout, "--"], write(cloneDir));
  const head = await git(["rev-parse", "HEAD"], read(cloneDir));
  if (head !== commit) throw new Error(`the clone checked out ${head}, not the check's commit ${commit}`);
}
