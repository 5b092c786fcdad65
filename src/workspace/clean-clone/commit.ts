/**
 * The user's commit, built without touching the target: `git add -A` runs against the target's
 * own working tree, configuration and attributes (so `core.autocrlf`, `core.fileMode`,
 * `.gitattributes`, every ignore source, assume-unchanged, skip-worktree and intent-to-add
 * entries count exactly as they would for the user), but on a copy of its index, and with the
 * object directory of the scratch clone (a full copy of the target's objects) as its only
 * object store. Then `write-tree`, and the commit object with HEAD as parent, written by the
 * harness itself into that same store (commit-object.ts). The target's index,
 * refs, config and objects are never written: not even an object's mtime, which git refreshes
 * when it "writes" an object it already has, and would refresh in an alternate too.
 */
import { copyFile, stat, utimes } from "node:fs/promises";
import { relative, sep } from "node:path";
import { git, HARNESS_IDENTITY } from "../git.js";
import { stageAll } from "../git-stage.js";
import { writeCommitObject } from "./commit-object.js";
import { CLEAN_CLONE_STEP_TIMEOUT_MS } from "./limits.js";
import type { CleanCloneTarget } from "./target.js";
import { writeUserGitConfig, type UserGitSettings } from "./user-config.js";

export interface ScratchObjects {
  /** The temporary index file, seeded from the target's. */
  indexFile: string;
  /** The object directory of the scratch clone: every object the target has, and where new ones go. */
  objectsDir: string;
}

/** The environment that points git at the scratch index and objects instead of the target's. */
export function scratchGitEnv(scratch: ScratchObjects): Record<string, string> {
  return { GIT_INDEX_FILE: scratch.indexFile, GIT_OBJECT_DIRECTORY: scratch.objectsDir };
}

/**
 * Settings that keep the target's files untouched while the scratch index is written: a split
 * index would write a new shared index into the target's git folder.
 */
const SCRATCH_INDEX_CONFIG: readonly string[] = ["-c", "core.splitIndex=false"];

/**
 * New blobs go into one pack instead of one loose file each: git streams every blob above
 * `core.bigFileThreshold` into a single "bulk check-in" pack. With the threshold at 1 byte that
 * is every blob but the empty and one-byte ones. It is the object store of a scratch clone, so
 * nothing is lost by packs without deltas; the ids are the same (a blob that needs conversion,
 * `autocrlf`, `eol`, `filter`, still goes through git's conversion first). On 5,000 new files
 * this took `git add -A` from about 12.5 s to 1.5 s on the shared machine (the loose objects
 * were 5,000 file creations, renames and folder updates).
 */
const PACK_NEW_BLOBS: readonly string[] = ["-c", "core.bigFileThreshold=1"];

/** A pathspec excluding the scratch folder when it lies inside the target's working tree. */
function scratchExclusion(target: CleanCloneTarget, scratchDir: string): string[] {
  const inside = relative(target.top, scratchDir);
  // Git ignores an exclusion of a folder outside the working tree, so excluding it anyway changes
  // nothing (`relative` of two absolute paths is never "" here, nor starts with a separator).
  // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral,MethodExpression: see above
  if (inside === "" || inside.startsWith("..") || inside.startsWith(sep)) return [];
  return [`:(top,exclude,literal)${inside.split(sep).join("/")}`];
}

/**
 * Racy-git: git trusts an entry's stat data only when the file's mtime is older than the index
 * file's own mtime; an entry written in the same instant as the index is compared by content.
 * A copy made now would have a newer mtime and make such entries look clean (a same-size edit
 * right after `git add` would be missed), so the copy gets the original's mtime, moved back by
 * a microsecond to absorb the rounding of a timestamp through a double: never later, so never
 * fewer entries compared by content.
 */
const RACY_MARGIN_NS = 1000n;

/** Copies the target's index to `copy` with a racy-safe mtime; false when the target has none. */
async function seedIndex(original: string, copy: string): Promise<boolean> {
  // Not the bounded reader: the index lies in the git folder, which sandboxed steps see read-only (and the `.git` link
  // that names it is put back after every step), so its type and size are git's, not the repository's.
  let info;
  try {
    info = await stat(original, { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  await copyFile(original, copy);
  await utimes(copy, Number(info.atimeNs) / 1e9, Number(info.mtimeNs - RACY_MARGIN_NS) / 1e9);
  return true;
}

export interface UserCommit {
  tree: string;
  commit: string;
}

/**
 * Builds, in `scratch`, the commit `git add -A && git commit` in the target would make (with the
 * user's global ignore file and line endings, when `userGit` carries them), and returns its tree and commit ids. Git's own errors are thrown as `GitError`.
 */
export async function buildUserCommit(target: CleanCloneTarget, scratch: ScratchObjects, scratchDir: string, userGit?: UserGitSettings): Promise<UserCommit> {
  // The user's ignore file and line endings count, from a file holding only those keys (user-config.ts).
  const userConfig = writeUserGitConfig(userGit, scratchDir);
  const env = { ...scratchGitEnv(scratch), ...(userConfig !== undefined ? { GIT_CONFIG_GLOBAL: userConfig } : {}) };
  // Stryker disable next-line BooleanLiteral: add -A and write-tree write the scratch index whatever; no optional lock is in play
  const options = { cwd: target.top, readOnly: true, env, timeoutMs: CLEAN_CLONE_STEP_TIMEOUT_MS };
  const seeded = await seedIndex(target.indexFile, scratch.indexFile);
  // A repository without an index (a bare-style checkout) starts from HEAD's tree, as git would.
  if (!seeded) await git(["read-tree", target.base], options);
  // As `git add -A`, but never running git inside a nested repository (its config is the agent's).
  await stageAll(options, scratchExclusion(target, scratchDir), [...SCRATCH_INDEX_CONFIG, ...PACK_NEW_BLOBS]);
  const tree = await git([...SCRATCH_INDEX_CONFIG, "write-tree"], options);
  const harness = { name: HARNESS_IDENTITY.GIT_AUTHOR_NAME, email: HARNESS_IDENTITY.GIT_AUTHOR_EMAIL };
  const commit = await writeCommitObject(scratch.objectsDir, {
    tree,
    parent: target.base,
    author: harness,
    committer: harness,
    time: Math.floor(Date.now() / 1000),
    message: `clean-clone check: the target's working tree on ${target.base}`,
  });
  return { tree, commit };
}
